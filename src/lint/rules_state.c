/*
 * rules_state.c — a forward that writes its inputs or its own state
 * (cause state-mutation): what the capture saw when it compared every
 * forward's inputs and the model's state with their values before it
 * (parity.json "state", written by python/onnxparity/capture.py), with the
 * exporter's "Removing mutation from node OP on block input: 'NAME'"
 * warnings as evidence that the graph froze that state.
 *
 *   ONP701 state-mutation (error): the forward changes a parameter or a
 *     buffer (the graph holds it as a constant: whatever the forward does to
 *     it happens again from the same value on every call), or a Python
 *     attribute when a forward from the changed state gave other outputs
 *     (state drift): the outputs depend on state the graph cannot hold;
 *   ONP702 input-mutation (warning): the forward writes to an input in
 *     place (the graph computes on its own value; only the caller's tensor
 *     differs in eager);
 *   ONP703 attribute-mutation (warning): the forward changes a Python
 *     attribute (a cache, a counter) and no rerun showed other outputs.
 *
 * Keys read (all optional, a key of another type ignored):
 *   state {changed_by_forward[] {name, kind, how, fixtures[]},
 *          inputs_written[] {name, fixtures[]}, state_drift},
 *   warnings[] {message}.
 * Without a "state" record (a bundle of an older capture, another tool's)
 * nothing fires: a "Removing mutation" warning alone comes from the
 * export's trace too (BatchNorm's num_batches_tracked in training mode) and
 * says nothing about the eager forward.  Depends on cJSON and lint_int.h
 * only.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "lint/lint_int.h"

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* "fixtures 0, 1, 2" (at most 8 shown) into buf. */
static void fixtures_text(const cJSON *list, char *buf, size_t n)
{
    const cJSON *k;
    size_t at = 0;
    int shown = 0, total = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    buf[0] = 0;
    if (!total) return;
    at += (size_t)snprintf(buf, n, "fixture%s ", total > 1 ? "s" : "");
    cJSON_ArrayForEach(k, list)
    {
        if (!cJSON_IsNumber(k) || at >= n) continue;
        if (shown == 8) {
            snprintf(buf + at, n - at, ", ... (%d in all)", total);
            return;
        }
        at += (size_t)snprintf(buf + at, n - at, "%s%.0f", shown ? ", " : "", k->valuedouble);
        shown++;
    }
}

/* The operator of the exporter's "Removing mutation from node OP on block
 * input: 'NAME'" warning about `name` (into op), or 0 when none names it. */
static int removed_by_exporter(const lint_ctx *c, const char *name, char *op, size_t n)
{
    static const char head[] = "Removing mutation from node ";
    const cJSON *w;
    cJSON_ArrayForEach(w, get(c->manifest, "warnings"))
    {
        const char *msg = get_str(w, "message");
        const char *p = msg ? strstr(msg, head) : NULL;
        if (!p) continue;
        p += sizeof head - 1;
        size_t oplen = strcspn(p, " ");
        const char *q = strstr(p, " on block input: '");
        if (!q) continue;
        q += strlen(" on block input: '");
        size_t len = strcspn(q, "'");
        if (q[len] != '\'' || len != strlen(name) || strncmp(q, name, len)) continue;
        if (oplen >= n) oplen = n - 1;
        memcpy(op, p, oplen);
        op[oplen] = 0;
        return 1;
    }
    return 0;
}

static void changed_state(lint_ctx *c, const cJSON *st, uint64_t *pos)
{
    int drift = cJSON_IsTrue(get(st, "state_drift"));
    const cJSON *e;
    cJSON_ArrayForEach(e, get(st, "changed_by_forward"))
    {
        const char *name = get_str(e, "name"), *kind = get_str(e, "kind"), *how = get_str(e, "how");
        if (!name) continue;
        if (!kind) kind = "attribute";
        int tensor = !strcmp(kind, "parameter") || !strcmp(kind, "buffer");
        char fx[160], op[64], frozen[160] = "";
        fixtures_text(get(e, "fixtures"), fx, sizeof fx);
        if (removed_by_exporter(c, name, op, sizeof op))
            snprintf(frozen, sizeof frozen, "; the exporter removed that mutation (%s)", op);
        onp_lint_location loc = {ONP_LINT_LOC_MODULE, "", name, "", -1, "", -1};
        const char *change = !how                      ? "changes"
                             : !strcmp(how, "added")   ? "adds"
                             : !strcmp(how, "removed") ? "removes"
                             : !strcmp(how, "rebound") ? "rebinds"
                                                       : "changes";
        if (tensor)
            lint_emit(c, R_STATE_MUTATION, &loc, LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                      "parity.json: the forward %s %s '%s'%s%s%s%s: the graph holds it as a "
                      "constant and cannot carry the update from one call to the next%s",
                      change, kind, name, fx[0] ? " (" : "", fx, fx[0] ? ")" : "", frozen,
                      drift ? "; a forward from the changed state gave other outputs (state drift)"
                            : "");
        else
            lint_emit(c, drift ? R_STATE_MUTATION : R_ATTRIBUTE_MUTATION, &loc,
                      LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                      "parity.json: the forward %s attribute '%s'%s%s%s: the graph cannot hold "
                      "it%s",
                      change, name, fx[0] ? " (" : "", fx, fx[0] ? ")" : "",
                      drift ? "; a forward from the changed state gave other outputs (state drift)"
                            : "; a rerun from the changed state gave the same outputs");
    }
}

static void written_inputs(lint_ctx *c, const lint_scope *main, const cJSON *st, uint64_t *pos)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, get(st, "inputs_written"))
    {
        const char *name = get_str(e, "name");
        if (!name) continue;
        char fx[160];
        fixtures_text(get(e, "fixtures"), fx, sizeof fx);
        size_t i;
        int found = onp_strmap_get(&main->input, name, &i);
        onp_lint_location loc = {ONP_LINT_LOC_INPUT, "", name, "", found ? (int64_t)i : -1, "", -1};
        lint_emit(c, R_INPUT_MUTATION, &loc, LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                  "parity.json: the forward writes to input '%s' in place%s%s%s: eager changes "
                  "the caller's tensor, the graph does not (the capture ran every forward on a "
                  "copy, so the recorded input is the value given)",
                  name, fx[0] ? " (" : "", fx, fx[0] ? ")" : "");
    }
}

void lint_check_state(lint_ctx *c, const lint_scope *main, uint64_t *pos)
{
    const cJSON *st = get(c->manifest, "state");
    if (!cJSON_IsObject(st)) return;
    changed_state(c, st, pos);
    written_inputs(c, main, st, pos);
}
