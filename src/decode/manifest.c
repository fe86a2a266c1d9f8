/*
 * manifest.c — a decode bundle's generate.json (docs/decode.md), read
 * strictly once: the graph's input and output names, the cache geometry,
 * the generation settings the loop must follow, and each batch's place and
 * shapes.  A member missing or of the wrong type is ONP_ERR_FORMAT naming
 * its path ("batches[2].cache_shapes[0]").  No ORT here.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "onnxparity/buf.h"
#include "onnxparity/json.h"
#include "util/fsio.h"

#define MANIFEST_CAP ((size_t)64 << 20)

static int bad(onp_error *e, const char *file, const char *field, const char *what)
{
    return onp_error_set(e, ONP_ERR_FORMAT, file, field, -1, "%s", what);
}

static const cJSON *member(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* o[key] as a string copied into out (n bytes). */
static int get_str(const cJSON *o, const char *key, const char *path, char *out, size_t n,
                   const char *file, onp_error *e)
{
    const cJSON *v = member(o, key);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return bad(e, file, path, "missing or not a non-empty string");
    if (strlen(v->valuestring) >= n) return bad(e, file, path, "string too long");
    strcpy(out, v->valuestring);
    return 0;
}

static int get_int(const cJSON *o, const char *key, const char *path, int64_t lo, int64_t hi,
                   int64_t *out, const char *file, onp_error *e)
{
    if (onp_json_int(member(o, key), lo, hi, out))
        return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1,
                             "missing or not an integer in [%lld, %lld]", (long long)lo,
                             (long long)hi);
    return 0;
}

/* A list of `n` names (each < ONP_DEC_NAME bytes). */
static int get_names(const cJSON *a, const char *path, size_t n, char (*out)[ONP_DEC_NAME],
                     const char *file, onp_error *e)
{
    if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != n)
        return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1,
                             "not a list of %zu names (2 per cache layer)", n);
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, (int)i);
        if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= ONP_DEC_NAME)
            return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1, "[%zu] is not a name", i);
        strcpy(out[i], v->valuestring);
    }
    return 0;
}

/* One batch: batches[k]. */
static int read_batch(const cJSON *b, size_t k, int steps, const char *file, onp_dec_batch *out,
                      onp_error *e)
{
    char path[96];
    int64_t v;
    snprintf(path, sizeof path, "batches[%zu].dir", k);
    if (get_str(b, "dir", path, out->dir, sizeof out->dir, file, e)) return -1;
    if (strchr(out->dir, '/') || !strcmp(out->dir, "..") || !strcmp(out->dir, "."))
        return bad(e, file, path, "not one folder name inside the bundle");
    snprintf(path, sizeof path, "batches[%zu].rows", k);
    if (get_int(b, "rows", path, 1, 1 << 20, &v, file, e)) return -1;
    out->rows = (int)v;
    snprintf(path, sizeof path, "batches[%zu].prompt_len", k);
    if (get_int(b, "prompt_len", path, 1, 1 << 24, &v, file, e)) return -1;
    out->prompt_len = (int)v;
    snprintf(path, sizeof path, "batches[%zu].logits", k);
    const cJSON *lg = member(b, "logits");
    if (!cJSON_IsBool(lg)) return bad(e, file, path, "missing or not a boolean");
    out->full = cJSON_IsTrue(lg);
    snprintf(path, sizeof path, "batches[%zu].cache", k);
    const cJSON *ca = member(b, "cache");
    if (ca && !cJSON_IsBool(ca)) return bad(e, file, path, "not a boolean");
    out->has_cache = ca ? cJSON_IsTrue(ca) : out->full;
    snprintf(path, sizeof path, "batches[%zu].prompt_lengths", k);
    const cJSON *pl = member(b, "prompt_lengths");
    if (!cJSON_IsArray(pl) || cJSON_GetArraySize(pl) != out->rows)
        return bad(e, file, path, "not a list with one length per row");
    out->lens = calloc((size_t)out->rows, sizeof *out->lens);
    if (!out->lens) return onp_error_set(e, ONP_ERR_NOMEM, file, path, -1, "out of memory");
    for (int r = 0; r < out->rows; r++) {
        if (onp_json_int(cJSON_GetArrayItem(pl, r), 1, out->prompt_len, &v))
            return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1,
                                 "[%d] is not a length in [1, prompt_len]", r);
        out->lens[r] = (int)v;
    }
    snprintf(path, sizeof path, "batches[%zu].cache_shapes", k);
    const cJSON *cs = member(b, "cache_shapes");
    if (!cJSON_IsArray(cs) || cJSON_GetArraySize(cs) < steps)
        return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1,
                             "not a list of at least %d shapes (one per step)", steps);
    out->cache = calloc((size_t)steps * 4, sizeof *out->cache);
    if (!out->cache) return onp_error_set(e, ONP_ERR_NOMEM, file, path, -1, "out of memory");
    for (int t = 0; t < steps; t++) {
        const cJSON *s = cJSON_GetArrayItem(cs, t);
        if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != 4)
            return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1, "[%d] is not a rank-4 shape",
                                 t);
        for (int d = 0; d < 4; d++)
            if (onp_json_int(cJSON_GetArrayItem(s, d), 0, INT64_MAX, &out->cache[t * 4 + d]))
                return onp_error_set(e, ONP_ERR_FORMAT, file, path, -1,
                                     "[%d][%d] is not a dimension", t, d);
    }
    return 0;
}

static int read_io(const cJSON *doc, onp_dec_manifest *m, const char *file, onp_error *e)
{
    const cJSON *in = member(doc, "inputs"), *out = member(doc, "outputs");
    size_t n = (size_t)m->layers * 2;
    if (get_str(in, "input_ids", "inputs.input_ids", m->in_ids, ONP_DEC_NAME, file, e) ||
        get_str(in, "attention_mask", "inputs.attention_mask", m->in_mask, ONP_DEC_NAME, file, e) ||
        get_str(in, "position_ids", "inputs.position_ids", m->in_pos, ONP_DEC_NAME, file, e) ||
        get_str(out, "logits", "outputs.logits", m->out_logits, ONP_DEC_NAME, file, e))
        return -1;
    m->past = calloc(n, sizeof *m->past);
    m->present = calloc(n, sizeof *m->present);
    if (!m->past || !m->present)
        return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    return get_names(member(in, "past"), "inputs.past", n, m->past, file, e) ||
                   get_names(member(out, "present"), "outputs.present", n, m->present, file, e)
               ? -1
               : 0;
}

static int read_doc(const cJSON *doc, onp_dec_manifest *m, const char *file, onp_error *e)
{
    const cJSON *sc = member(doc, "schema");
    if (!cJSON_IsString(sc) || strcmp(sc->valuestring, ONP_DEC_SCHEMA))
        return bad(e, file, "schema", "not " ONP_DEC_SCHEMA " (is this a decode bundle?)");
    const cJSON *model = member(doc, "model");
    const cJSON *mt = member(model, "model_type");
    snprintf(m->model_type, sizeof m->model_type, "%s", cJSON_IsString(mt) ? mt->valuestring : "");
    const cJSON *ex = member(doc, "exporter");
    snprintf(m->exporter, sizeof m->exporter, "%s", cJSON_IsString(ex) ? ex->valuestring : "");
    int64_t v;
    if (get_int(model, "vocab", "model.vocab", 2, INT32_MAX, &v, file, e)) return -1;
    m->vocab = v;
    if (get_int(member(doc, "cache"), "layers", "cache.layers", 1, 4096, &v, file, e)) return -1;
    m->layers = (int)v;
    const cJSON *g = member(doc, "generation");
    if (get_int(g, "steps", "generation.steps", 1, 1 << 20, &v, file, e)) return -1;
    m->steps = (int)v;
    const cJSON *st = member(g, "strategy"), *pr = member(g, "position_ids"),
                *pd = member(g, "padding");
    if (!cJSON_IsString(st) ||
        (strcmp(st->valuestring, "greedy") && strcmp(st->valuestring, "sample")))
        return bad(e, file, "generation.strategy", "not \"greedy\" or \"sample\"");
    m->sample = !strcmp(st->valuestring, "sample");
    m->temperature = NAN;
    if (m->sample) {
        const cJSON *tv = member(g, "temperature");
        if (!cJSON_IsNumber(tv) || !(tv->valuedouble > 0) || !isfinite(tv->valuedouble))
            return bad(e, file, "generation.temperature",
                       "missing or not a positive number (strategy \"sample\")");
        m->temperature = tv->valuedouble;
    }
    m->eos = -1;
    const cJSON *eos = member(g, "eos_token_id");
    if (eos && !cJSON_IsNull(eos) &&
        get_int(g, "eos_token_id", "generation.eos_token_id", 0, m->vocab - 1, &m->eos, file, e))
        return -1;
    m->pad = 0;
    const cJSON *pad = member(g, "pad_token_id");
    if (pad && !cJSON_IsNull(pad) &&
        get_int(g, "pad_token_id", "generation.pad_token_id", 0, INT32_MAX, &m->pad, file, e))
        return -1;
    if (!cJSON_IsString(pr) || strcmp(pr->valuestring, "cumsum-1"))
        return bad(e, file, "generation.position_ids", "not \"cumsum-1\" (the only rule known)");
    if (!cJSON_IsString(pd) || strcmp(pd->valuestring, "left"))
        return bad(e, file, "generation.padding", "not \"left\"");
    if (get_int(doc, "topk", "topk", 1, m->vocab, &v, file, e)) return -1;
    m->topk = (int)v;
    if (read_io(doc, m, file, e)) return -1;
    const cJSON *bs = member(doc, "batches");
    if (!cJSON_IsArray(bs) || cJSON_GetArraySize(bs) < 1)
        return bad(e, file, "batches", "missing or an empty list");
    m->n_batches = (size_t)cJSON_GetArraySize(bs);
    m->batches = calloc(m->n_batches, sizeof *m->batches);
    if (!m->batches) return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    for (size_t k = 0; k < m->n_batches; k++)
        if (read_batch(cJSON_GetArrayItem(bs, (int)k), k, m->steps, file, &m->batches[k], e))
            return -1;
    return 0;
}

int onp_dec_manifest_read(const char *dir, onp_dec_manifest *m, onp_error *e)
{
    memset(m, 0, sizeof *m);
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    char file[1200];
    snprintf(file, sizeof file, "%s/generate.json", dir);
    onp_buf b;
    if (onp_read_regular(file, MANIFEST_CAP, "", &b, e)) {
        onp_buf_free(&b);
        return -1;
    }
    cJSON *doc = onp_json_parse(b.p, b.n, file, ONP_ERR_FORMAT, "not valid JSON", e);
    onp_buf_free(&b);
    if (!doc) return -1;
    int rc = read_doc(doc, m, file, e);
    cJSON_Delete(doc);
    if (rc) onp_dec_manifest_release(m);
    return rc;
}

void onp_dec_manifest_release(onp_dec_manifest *m)
{
    if (!m) return;
    for (size_t k = 0; k < m->n_batches; k++) {
        free(m->batches[k].lens);
        free(m->batches[k].cache);
    }
    free(m->batches);
    free(m->past);
    free(m->present);
    m->batches = NULL;
    m->past = m->present = NULL;
    m->n_batches = 0;
}
