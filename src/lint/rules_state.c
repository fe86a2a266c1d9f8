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
 *     it happens again from the same value on every call) and the outputs
 *     depend on it: a forward from the changed state gave other outputs
 *     (state drift), or a graph output is computed from the graph's value
 *     of that name (dataflow), or the capture did not say (no state_drift
 *     key); also a Python attribute with state drift;
 *   ONP702 input-mutation (warning): the forward writes to an input in
 *     place (the graph computes on its own value; only the caller's tensor
 *     differs in eager);
 *   ONP703 attribute-mutation (warning): the forward changes a Python
 *     attribute (a cache, a counter) and no rerun showed other outputs;
 *   ONP704 state-mutation-unread (warning): the forward changes a parameter
 *     or a buffer, a forward from the changed state gave the same outputs
 *     and no graph output is computed from it: every call's numbers agree,
 *     only the state itself does not persist (latent, like ONP703).
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
#include <stdlib.h>
#include <string.h>

#include "lint/lint_int.h"
#include "model/dataflow.h"
#include "util/strmap.h"

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

/* Whether an output of the main graph is computed from the value `name`
 * (an initializer, a graph input or a node's output of that name): 1 with
 * the first such output's name in *out, 0 when none is, -1 when the graph
 * holds no value of that name (the exporter dropped it, or folded it into
 * another constant: the graph cannot tell).  An output is computed from it
 * when it is that value, or a node upstream of it reads it, directly or
 * from one of its subgraphs (model/dataflow.h).  Out of memory marks c and
 * answers 1 (the error stays, as before this check). */
static int output_reads(lint_ctx *c, const lint_scope *main, const char *name, const char **out)
{
    const onp_graph *g = main->g;
    *out = NULL;
    if (!onp_strmap_get(&main->init, name, NULL) && !onp_strmap_get(&main->input, name, NULL) &&
        !onp_strmap_get(&main->producer, name, NULL))
        return -1;
    size_t nn = g->n_nodes ? g->n_nodes : 1;
    unsigned char *up = malloc(nn);
    int found = 0;
    if (!up) goto oom;
    for (size_t k = 0; k < g->n_outputs && !found; k++) {
        const char *o = g->outputs[k].name;
        memset(up, 0, nn);
        if (onp_graph_upstream(g, &o, 1, up)) goto oom;
        found = !strcmp(o, name);
        for (size_t i = 0; i < g->n_nodes && !found; i++)
            found = up[i] && onp_node_reads(&g->nodes[i], name);
        if (found) *out = o;
    }
    free(up);
    return found;
oom:
    free(up);
    c->oom = 1;
    return 1;
}

static void changed_state(lint_ctx *c, const lint_scope *main, const cJSON *st, uint64_t *pos)
{
    const cJSON *drift_key = get(st, "state_drift");
    int drift = cJSON_IsTrue(drift_key);
    /* an older capture's record without the key: whether the outputs moved
     * is unknown, and the finding stays an error */
    int drift_known = cJSON_IsBool(drift_key);
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
        const char *reader = NULL;
        int reads = tensor ? output_reads(c, main, name, &reader) : 0;
        if (tensor && (drift || reads == 1 || !drift_known)) {
            char why[320] = "";
            if (reads == 1)
                snprintf(why, sizeof why, "; graph output '%s' is computed from it", reader);
            if (drift)
                snprintf(why + strlen(why), sizeof why - strlen(why), "%s",
                         "; a forward from the changed state gave other outputs (state drift)");
            lint_emit(c, R_STATE_MUTATION, &loc, LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                      "parity.json: the forward %s %s '%s'%s%s%s%s: the graph holds it as a "
                      "constant and cannot carry the update from one call to the next%s",
                      change, kind, name, fx[0] ? " (" : "", fx, fx[0] ? ")" : "", frozen, why);
        } else if (tensor)
            lint_emit(c, R_STATE_MUTATION_UNREAD, &loc, LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                      "parity.json: the forward %s %s '%s'%s%s%s%s; %s and a forward from the "
                      "changed state gave the same outputs: every call's numbers agree, but the "
                      "graph keeps no state, so code that reads '%s' after a call (a counter, a "
                      "saved state_dict) sees eager's value move and the deployment's stand still",
                      change, kind, name, fx[0] ? " (" : "", fx, fx[0] ? ")" : "", frozen,
                      reads < 0 ? "the graph holds no value of that name"
                                : "no graph output is computed from it",
                      name);
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
    changed_state(c, main, st, pos);
    written_inputs(c, main, st, pos);
}
