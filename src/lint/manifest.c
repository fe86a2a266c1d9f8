/*
 * manifest.c — what parity.json (written by python/onnxparity/capture.py,
 * schema "onnxparity.capture/1") adds to the lint: the export-time sizes of
 * dims the graph declares dynamic, and the findings only the PyTorch side
 * could see: modules in training mode (ONP106), the exporter's warnings
 * (ONP107, ONP205, ONP414, ONP415), TracerWarnings with file:line (ONP301),
 * eager taking another module path than the trace (ONP302), dims that vary
 * across fixtures but were exported static (ONP204), an eager model that
 * is not deterministic (ONP602), and a forward that writes its inputs or its
 * own state (ONP701-703, rules_state.c reads "state").
 *
 * Keys read (every one optional; a key of another type is ignored):
 *   training {any, modules_in_training[], export_mode}, module_map {path: value},
 *   warnings[] {category, category_module, message, file, line, code},
 *   shape_risks[] {name, dim, sizes[]}, eager_vs_trace {same_modules_called, note},
 *   deterministic, determinism {verdict}, export_args {traced_fixture},
 *   fixtures[] {inputs[] {name, shape[]}}, and rules_state.c's keys.
 * A file that cannot be read, or that is not a JSON object, is an error
 * naming it.  The document comes from a manifest (manifest.h): the
 * caller's (onp_lint_opts.manifest_doc, borrowed) or one opened here.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lint/lint_int.h"
#include "onnxparity/manifest.h"

int lint_manifest_load(lint_ctx *c, const onp_lint_opts *opts, onp_error *e)
{
    if (opts && opts->manifest_doc) {
        c->manifest = onp_manifest_doc(opts->manifest_doc);
        return 0;
    }
    if (!opts || !opts->manifest) return 0;
    onp_manifest *mf;
    if (onp_manifest_open(opts->manifest, &mf, e)) return -1;
    c->manifest_own = mf;
    c->manifest = onp_manifest_doc(mf);
    return 0;
}

void lint_manifest_free(lint_ctx *c)
{
    onp_manifest_free(c->manifest_own);
    c->manifest_own = NULL;
    c->manifest = NULL;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

// --- export-time sizes ------------------------------------------------------------

void lint_manifest_sizes(lint_ctx *c, const lint_scope *main)
{
    const cJSON *doc = c->manifest;
    if (!doc) return;
    const cJSON *tf = get(get(doc, "export_args"), "traced_fixture");
    int k = cJSON_IsNumber(tf) && tf->valuedouble >= 0 && tf->valuedouble < 1e9
                ? (int)tf->valuedouble
                : 0;
    const cJSON *fixtures = get(doc, "fixtures");
    if (!cJSON_IsArray(fixtures)) return;
    const cJSON *fx = cJSON_GetArrayItem(fixtures, k);
    if (!fx) fx = cJSON_GetArrayItem(fixtures, 0);
    const cJSON *inputs = get(fx, "inputs"), *in;
    if (!cJSON_IsArray(inputs)) return;
    cJSON_ArrayForEach(in, inputs)
    {
        const char *name = get_str(in, "name");
        const cJSON *shape = get(in, "shape");
        size_t i;
        if (!name || !cJSON_IsArray(shape) || !onp_strmap_get(&main->input, name, &i)) continue;
        const onp_value_info *vi = &main->g->inputs[i];
        const onp_type *t = &vi->type;
        if (t->kind != ONP_TYPE_TENSOR || !t->has_shape) continue;
        if ((size_t)cJSON_GetArraySize(shape) != t->rank) continue;
        for (size_t d = 0; d < t->rank; d++) {
            const cJSON *sz = cJSON_GetArrayItem(shape, (int)d);
            int symbolic = (t->dims[d].param && t->dims[d].param[0]) || t->dims[d].value < 0;
            if (symbolic && cJSON_IsNumber(sz) && sz->valuedouble > 1 && sz->valuedouble < 9e15)
                lint_size_add(c, vi->name, d, (int64_t)sz->valuedouble, 1);
        }
    }
}

// --- findings ---------------------------------------------------------------------

/* A node of the main graph that the module computes, or NULL: through
 * module_map {path: value}, else by torch's scope naming ("/a/a.1/Op"). */
static const onp_node *module_node(const lint_ctx *c, const lint_scope *main, const char *path)
{
    const char *value = get_str(get(c->manifest, "module_map"), path);
    if (value) {
        const onp_node *n = lint_producer(main, value, NULL);
        if (n) return n;
    }
    char needle[512];
    snprintf(needle, sizeof needle, "/%s/", path);
    for (size_t i = 0; i < main->g->n_nodes; i++)
        if (strstr(main->g->nodes[i].name, needle)) return &main->g->nodes[i];
    return NULL;
}

static int mode_sensitive(const onp_node *n)
{
    static const char *const ops[] = {
        "Dropout",           "BatchNormalization", "InstanceNormalization",
        "RandomUniformLike", "RandomNormalLike",   "Bernoulli"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (lint_is_op(n, ops[i])) return 1;
    return 0;
}

static void training(lint_ctx *c, const lint_scope *main, uint64_t *pos)
{
    const cJSON *tr = get(c->manifest, "training");
    const cJSON *list = get(tr, "modules_in_training"), *m;
    int n_list = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (!cJSON_IsTrue(get(tr, "any")) && n_list == 0) return;
    char shown[1024] = "";
    size_t k = 0;
    int listed = 0, sensitive = 0;
    const char *first = "";
    /* modules whose nodes depend on the mode first, then the others */
    for (int pass = 0; pass < 2; pass++) {
        cJSON_ArrayForEach(m, list)
        {
            if (!cJSON_IsString(m) || !m->valuestring || listed >= 8) continue;
            const char *p = m->valuestring;
            const onp_node *n = strcmp(p, "<root>") ? module_node(c, main, p) : NULL;
            int s = n && mode_sensitive(n);
            if (s != !pass) continue;
            sensitive += s;
            if (!listed) first = p;
            if (k < sizeof shown)
                k += (size_t)snprintf(shown + k, sizeof shown - k, "%s%s%s%s%s", listed ? ", " : "",
                                      p, s ? " (" : "", s ? n->op_type : "", s ? ")" : "");
            listed++;
        }
    }
    const char *mode = get_str(tr, "export_mode");
    onp_lint_location loc = {ONP_LINT_LOC_MODULE, "", first, "", -1, "", -1};
    if (!listed) loc.kind = ONP_LINT_LOC_MODEL;
    char what[64];
    if (n_list)
        snprintf(what, sizeof what, "%d module(s) were", n_list);
    else
        snprintf(what, sizeof what, "the model was");
    /* no node computes in training form (torch 2.15's dynamo exporter writes
     * a training-mode BatchNorm with its running statistics): a risk, and
     * the numbers decide */
    int inert = lint_training_nodes(c, main) == 0;
    lint_emit(c, inert ? R_MODULES_IN_TRAINING_INERT : R_MODULES_IN_TRAINING, &loc,
              LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
              "parity.json: %s in training mode at export%s%s%s%s%s%s%s", what,
              mode ? " (export mode " : "", mode ? mode : "", mode ? ")" : "", listed ? ": " : "",
              shown, n_list > listed ? ", ..." : "",
              inert ? "; yet no node of the graph computes in training form (no live Dropout, no "
                      "training-mode BatchNormalization, no random operator): the exporter wrote "
                      "them in inference form, and the eager truth runs in eval mode"
              : sensitive ? "; the graph holds their mode-dependent nodes"
                          : "");
}

static int has(const char *s, const char *word)
{
    return strcasestr(s, word) != NULL;
}

/* Which rule an export warning falls under; R_COUNT: not the exporter's. */
static lint_rule_ix classify(const char *cat, const char *mod, const char *file, const char *msg)
{
    if (!strcmp(cat, "TracerWarning")) return R_TRACER_WARNING;
    /* the capture's own warning (python/onnxparity/capture.py _warn_size_one) */
    if (has(msg, "specializes a dim of size 1")) return R_SIZE_ONE_TRACE;
    int onnx = !strncmp(mod, "torch.onnx", 10) || strstr(file, "torch/onnx") || has(msg, "onnx");
    if (!onnx) return R_COUNT;
    /* an op left unfolded is computed at run time instead: same numbers */
    if (has(msg, "Constant folding not applied")) return R_COUNT;
    if (!strcmp(cat, "DeprecationWarning") || !strcmp(cat, "FutureWarning") ||
        !strcmp(cat, "PendingDeprecationWarning"))
        return R_EXPORTER_NOTE;
    if (has(msg, "training mode") || has(msg, "TrainingMode") || has(msg, "train=") ||
        has(msg, "training-amenable") || has(msg, "num_batches_tracked"))
        return R_EXPORTER_TRAINING;
    if (has(msg, "batch_size") || has(msg, "batch size") || has(msg, "dynamic input shape"))
        return R_EXPORTER_SHAPE;
    static const char *const semantic[] = {
        "incorrect",   "not support",        "unsupported",
        "might cause", "may cause",          "differ",
        "mismatch",    "not match",          "combination of multiple",
        "substitut",   "replaced",           "fall back",
        "fallback",    "approximat",         "precision",
        "duplicated",  "cannot be inferred", "you are trying to export"};
    for (size_t i = 0; i < sizeof semantic / sizeof semantic[0]; i++)
        if (has(msg, semantic[i])) return R_EXPORTER_OP;
    return R_EXPORTER_NOTE;
}

/* TracerWarnings whose converted value cannot change what the graph
 * computes, by where they are raised: (file suffix, source line prefix,
 * why).  To add one: the torch (or torchvision) line, and the reason no
 * input can make the traced value differ. */
static const struct benign_tracer {
    const char *file, *code, *why;
} benign_tracers[] = {
    {"", "assert ", "a passed assert fixes no path: the graph only drops the check"},
    {"", "assert(", "a passed assert fixes no path: the graph only drops the check"},
    {"torch/_tensor.py", "return self.item().__format__(",
     "a tensor formatted into a string (an assert's or a log's message)"},
    {"torch/nn/functional.py", "q_scaled = q / math.sqrt(E)",
     "multi_head_attention_forward's E is the head dim, embed_dim / num_heads, fixed by the "
     "module"},
};

static int benign_tracer(const char *file, const char *code)
{
    size_t fl = file ? strlen(file) : 0;
    for (size_t i = 0; code && i < sizeof benign_tracers / sizeof benign_tracers[0]; i++) {
        const struct benign_tracer *b = &benign_tracers[i];
        size_t bl = strlen(b->file);
        if (bl && (fl < bl || strcmp(file + fl - bl, b->file))) continue;
        if (!strncmp(code, b->code, strlen(b->code))) return 1;
    }
    return 0;
}

/* "torch.tensor results are registered as constants" raised on a line that
 * calls torch.tensor on a number literal (`torch.tensor(1.0, dtype=dtype)`):
 * the constant is the literal, the same on every input. */
static int literal_tensor(const char *msg, const char *code)
{
    static const char call[] = "torch.tensor(", what[] = "torch.tensor results are registered";
    if (!msg || !code || strncmp(msg, what, sizeof what - 1)) return 0;
    const char *p = strstr(code, call);
    if (!p) return 0;
    p += sizeof call - 1;
    if (*p == '-') p++;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1]))) return 0;
    while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
           ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E')))
        p++;
    while (*p == ' ') p++;
    return *p == ',' || *p == ')';
}

static int same_str(const cJSON *a, const cJSON *b, const char *key)
{
    const char *x = get_str(a, key), *y = get_str(b, key);
    return x == y || (x && y && !strcmp(x, y));
}

/* 1 when the warning was raised inside torch.onnx: its file:line is the
 * exporter's own, nothing the user can act on. */
static int in_exporter(const cJSON *w)
{
    const char *file = get_str(w, "file");
    return file && strstr(file, "torch/onnx/");
}

/* Two records of the same warning (the exporter repeats some per node, and
 * raises some from several of its own lines: one warning then). */
static int same_warning(const cJSON *a, const cJSON *b)
{
    if (in_exporter(a) && in_exporter(b) && same_str(a, b, "category") && same_str(a, b, "message"))
        return 1;
    const cJSON *la = get(a, "line"), *lb = get(b, "line");
    int same_line = cJSON_IsNumber(la) ? cJSON_IsNumber(lb) && la->valuedouble == lb->valuedouble
                                       : !cJSON_IsNumber(lb);
    return same_line && same_str(a, b, "category") && same_str(a, b, "file") &&
           same_str(a, b, "message");
}

/* " in module P" (or " in modules P, Q and N more", " in the model's own
 * forward") from a warning record's "modules" (the capture's: the paths of
 * the module class whose forward holds the line) into out; "" without. */
static void warning_modules(const cJSON *w, char *out, size_t n)
{
    const cJSON *mods = get(w, "modules"), *m;
    out[0] = 0;
    if (!cJSON_IsArray(mods) || !cJSON_GetArraySize(mods)) return;
    int total = cJSON_GetArraySize(mods), shown = 0;
    size_t len = 0;
    cJSON_ArrayForEach(m, mods)
    {
        const char *p = cJSON_GetStringValue(m);
        if (!p || shown == 2) continue;
        int k =
            snprintf(out + len, n - len, "%s%s%s%s", shown ? ", " : " in module",
                     !shown && total > 1 ? "s " : " ", p[0] ? "" : "(the model's own forward)", p);
        if (k < 0 || (size_t)k >= n - len) break;
        len += (size_t)k;
        shown++;
    }
    if (shown && total > shown) snprintf(out + len, n - len, " and %d more", total - shown);
}

static void warnings(lint_ctx *c, const lint_scope *main, uint64_t *pos)
{
    const cJSON *list = get(c->manifest, "warnings"), *w;
    if (!cJSON_IsArray(list)) return;
    cJSON_ArrayForEach(w, list)
    {
        const char *cat0 = get_str(w, "category");
        if (cat0 && !strcmp(cat0, "TracerWarning")) c->r->tracer_warnings++; /* every record */
        /* report each distinct warning once, at its first record */
        const cJSON *o;
        int seen = 0, times = 0;
        for (o = list->child; o != w && !seen; o = o->next) seen = same_warning(o, w);
        if (seen) continue;
        for (o = w; o; o = o->next) times += same_warning(o, w);
        const char *cat = get_str(w, "category"), *mod = get_str(w, "category_module");
        const char *file = get_str(w, "file"), *msg = get_str(w, "message");
        const char *code = get_str(w, "code");
        const cJSON *line = get(w, "line");
        if (!cat) cat = "Warning";
        if (!msg) msg = "";
        lint_rule_ix ix = classify(cat, mod ? mod : "", file ? file : "", msg);
        if (ix == R_COUNT) continue;
        if (ix == R_TRACER_WARNING && (benign_tracer(file, code) || literal_tensor(msg, code)))
            continue;
        /* "operator 'dropout' is set to train=True" (F.dropout's default) matters
         * only where a Dropout can drop: not when every live one has ratio 0 */
        if (ix == R_EXPORTER_TRAINING && has(msg, "dropout") && !lint_live_dropouts(c, main))
            continue;
        /* "operator 'instance_norm' is set to train=True": torch says so for a
         * call on the input's own statistics (use_input_stats: an InstanceNorm
         * without running statistics, in either mode), and ONNX's
         * InstanceNormalization computes exactly that; one with running
         * statistics in eval fails the export instead ("instance_norm
         * training for unknown batch size").  No number differs. */
        if (ix == R_EXPORTER_TRAINING && has(msg, "'instance_norm'")) continue;
        int64_t ln = cJSON_IsNumber(line) && line->valuedouble >= 0 && line->valuedouble < 9e15
                         ? (int64_t)line->valuedouble
                         : -1;
        onp_lint_location loc = {ONP_LINT_LOC_SOURCE, "", "", "", -1, file ? file : "", ln};
        if (!file) loc.kind = ONP_LINT_LOC_MODEL;
        char where[600] = "", rep[48] = "";
        if (times > 1) snprintf(rep, sizeof rep, " (%d times)", times);
        if (file && ln >= 0)
            snprintf(where, sizeof where, " at %s:%" PRId64, file, ln);
        else if (file)
            snprintf(where, sizeof where, " in %s", file);
        /* the message's first line, shortened */
        char text[400];
        size_t n = strcspn(msg, "\n");
        if (n > sizeof text - 4) n = sizeof text - 4;
        memcpy(text, msg, n);
        strcpy(text + n, strlen(msg) > n ? "..." : "");
        if (ix == R_TRACER_WARNING) {
            char in_mod[320];
            warning_modules(w, in_mod, sizeof in_mod);
            lint_emit(c, ix, &loc, LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                      "parity.json: TracerWarning%s%s%s%s%s%s: %s: the traced graph holds the "
                      "path of the traced fixture only",
                      where, code && code[0] ? " (`" : "", code ? code : "",
                      code && code[0] ? "`)" : "", in_mod, rep, text);
        } else
            lint_emit(c, ix, &loc, LINT_ORDER(LINT_SEC_MANIFEST, (*pos)++),
                      "parity.json: %s from the %s%s%s: %s", cat,
                      ix == R_SIZE_ONE_TRACE ? "capture" : "exporter", where, rep, text);
    }
}

static void shape_risks(lint_ctx *c, const lint_scope *main)
{
    const cJSON *list = get(c->manifest, "shape_risks"), *r;
    if (!cJSON_IsArray(list)) return;
    size_t k = 0;
    cJSON_ArrayForEach(r, list)
    {
        const char *name = get_str(r, "name");
        const cJSON *dim = get(r, "dim"), *sizes = get(r, "sizes"), *s;
        if (!name) continue;
        char txt[256] = "";
        size_t n = 0;
        if (cJSON_IsArray(sizes)) {
            cJSON_ArrayForEach(s, sizes)
            {
                if (!cJSON_IsNumber(s) || n >= sizeof txt) continue;
                n += (size_t)snprintf(txt + n, sizeof txt - n, "%s%.0f", n ? ", " : "",
                                      s->valuedouble);
            }
        }
        size_t i, out = 0;
        int found = onp_strmap_get(&main->input, name, &i);
        /* capture lists inputs and outputs alike: name an output as one */
        while (!found && out < main->g->n_outputs && strcmp(main->g->outputs[out].name, name))
            out++;
        int is_out = !found && out < main->g->n_outputs;
        onp_lint_location loc = {is_out ? ONP_LINT_LOC_OUTPUT : ONP_LINT_LOC_INPUT, "", name, "",
                                 found ? (int64_t)i : is_out ? (int64_t)out : -1,   "", -1};
        /* next to the value's own findings; manifest-only names after every input */
        uint64_t order = found    ? LINT_ORDER(LINT_SEC_INPUT, i)
                         : is_out ? LINT_ORDER(LINT_SEC_OUTPUT, out)
                                  : LINT_ORDER(LINT_SEC_INPUT, main->g->n_inputs + k);
        k++;
        lint_emit(c, R_SHAPE_RISK, &loc, order,
                  "parity.json: %s '%s' dim %.0f takes sizes [%s] across the fixtures but was "
                  "exported static: the graph holds the traced size",
                  is_out ? "output" : "input", name, cJSON_IsNumber(dim) ? dim->valuedouble : -1.0,
                  txt);
    }
}

void lint_check_manifest(lint_ctx *c, const lint_scope *main)
{
    if (!c->manifest) return;
    uint64_t pos = 0;
    training(c, main, &pos);
    warnings(c, main, &pos);
    shape_risks(c, main);
    const cJSON *evt = get(c->manifest, "eager_vs_trace");
    if (cJSON_IsFalse(get(evt, "same_modules_called"))) {
        const char *note = get_str(evt, "note");
        onp_lint_location loc = {ONP_LINT_LOC_MODEL, "", "", "", -1, "", -1};
        lint_emit(c, R_TRACE_PATH_DIFFERS, &loc, LINT_ORDER(LINT_SEC_MANIFEST, pos++),
                  "parity.json: eager called other modules than the trace did%s%s: the graph "
                  "holds one branch of data-dependent control flow",
                  note ? ": " : "", note ? note : "");
    }
    /* a rerun from the restored state that differs; state drift (a forward
     * from the state an earlier forward left) is ONP701's, not this rule's */
    const char *verdict = get_str(get(c->manifest, "determinism"), "verdict");
    if (cJSON_IsFalse(get(c->manifest, "deterministic")) &&
        !(verdict && !strcmp(verdict, "state-drift"))) {
        onp_lint_location loc = {ONP_LINT_LOC_MODEL, "", "", "", -1, "", -1};
        lint_emit(c, R_EAGER_NONDETERMINISTIC, &loc, LINT_ORDER(LINT_SEC_MANIFEST, pos++),
                  "parity.json: two eager runs on the same fixture differed: the reference "
                  "itself moves, so no tolerance is safe until it is deterministic");
    }
    lint_check_state(c, main, &pos);
}
