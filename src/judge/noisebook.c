/*
 * noisebook.c — the float64 statistics a capture recorded in parity.json's
 * "noise" section (docs/capture.md), indexed by fixture and output, and the
 * relative envelope learned from them for fixtures the float64 pass did not
 * cover (judge.h).  Walks the document of an open manifest (manifest.h);
 * owns every string it returns (one arena).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/judge.h"
#include "onnxparity/manifest.h"
#include "util/arena.h"

typedef struct nb_entry {
    int fixture;
    const char *name;
    onp_noise n;
} nb_entry;

/* Per output: whether the capture found it a classifier's logits. */
typedef struct nb_role {
    const char *name;
    int logits;
} nb_role;

/* Per output: the largest relative noise over the covered fixtures. */
typedef struct nb_rel {
    const char *name;
    double rel_max, rel_rms;
} nb_rel;

struct onp_noisebook {
    onp_arena a;
    const char *reference, *reason;
    int eager_random; /* determinism.verdict "nondeterministic" or "state-drift" */
    size_t covered;
    nb_entry *e;
    size_t n;
    nb_rel *rel;
    size_t n_rel;
    nb_role *role; /* adequacy.output_roles */
    size_t n_role;
};

/* A finite number >= 0 at o[key], else -1 with *e naming the member. */
static int num(const cJSON *o, const char *key, const char *path, const char *where, double *out,
               onp_error *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
        char field[256];
        snprintf(field, sizeof field, "%s.%s", where, key);
        return onp_error_set(e, ONP_ERR_FORMAT, path, field, -1, "not a finite number >= 0");
    }
    *out = v->valuedouble;
    return 0;
}

static int read_stats(const cJSON *o, const char *path, const char *where, onp_noise *n,
                      onp_error *e)
{
    memset(n, 0, sizeof *n);
    n->src = ONP_NOISE_FLOAT64;
    if (num(o, "max_abs", path, where, &n->max_abs, e) || num(o, "rms", path, where, &n->rms, e) ||
        num(o, "scale_max", path, where, &n->scale_max, e) ||
        num(o, "scale_rms", path, where, &n->scale_rms, e))
        return -1;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "q999");
    if (q && num(o, "q999", path, where, &n->q999, e)) return -1;
    return 0;
}

static int fmt_err(onp_error *e, const char *path, const char *field, const char *msg)
{
    return onp_error_set(e, ONP_ERR_FORMAT, path, field, -1, "%s", msg);
}

static void add_rel(onp_noisebook *nb, const nb_entry *x)
{
    double rm = x->n.scale_max > 0 ? x->n.max_abs / x->n.scale_max : 0;
    double rr = x->n.scale_rms > 0 ? x->n.rms / x->n.scale_rms : 0;
    for (size_t i = 0; i < nb->n_rel; i++)
        if (!strcmp(nb->rel[i].name, x->name)) {
            if (rm > nb->rel[i].rel_max) nb->rel[i].rel_max = rm;
            if (rr > nb->rel[i].rel_rms) nb->rel[i].rel_rms = rr;
            return;
        }
    nb->rel[nb->n_rel++] = (nb_rel){x->name, rm, rr};
}

static int parse(onp_noisebook *nb, const cJSON *noise, const char *path, onp_error *e)
{
    if (!cJSON_IsObject(noise)) return fmt_err(e, path, "noise", "not an object");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(noise, "reference");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(noise, "reason");
    if (cJSON_IsString(ref))
        nb->reference = onp_arena_strndup(&nb->a, ref->valuestring, strlen(ref->valuestring));
    else if (ref && !cJSON_IsNull(ref))
        return fmt_err(e, path, "noise.reference", "not a string or null");
    if (cJSON_IsString(why))
        nb->reason = onp_arena_strndup(&nb->a, why->valuestring, strlen(why->valuestring));
    const cJSON *fx = cJSON_GetObjectItemCaseSensitive(noise, "fixtures");
    if (!fx) return 0;
    if (!cJSON_IsArray(fx)) return fmt_err(e, path, "noise.fixtures", "not an array");
    size_t total = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fx)
    {
        const cJSON *outs = cJSON_GetObjectItemCaseSensitive(f, "outputs");
        if (cJSON_IsArray(outs)) total += (size_t)cJSON_GetArraySize(outs);
    }
    nb->e = onp_arena_array(&nb->a, total ? total : 1, sizeof *nb->e);
    nb->rel = onp_arena_array(&nb->a, total ? total : 1, sizeof *nb->rel);
    if (!nb->e || !nb->rel) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    size_t fi = 0;
    cJSON_ArrayForEach(f, fx)
    {
        char where[128];
        snprintf(where, sizeof where, "noise.fixtures[%zu]", fi++);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(f, "fixture");
        const cJSON *outs = cJSON_GetObjectItemCaseSensitive(f, "outputs");
        if (!cJSON_IsObject(f) || !cJSON_IsNumber(k) || k->valuedouble < 0 ||
            k->valuedouble > 1e9 || k->valuedouble != floor(k->valuedouble))
            return fmt_err(e, path, where, "needs an integer \"fixture\" >= 0");
        if (!cJSON_IsArray(outs)) return fmt_err(e, path, where, "needs an \"outputs\" array");
        nb->covered++;
        size_t oi = 0;
        const cJSON *o;
        cJSON_ArrayForEach(o, outs)
        {
            char w2[192];
            snprintf(w2, sizeof w2, "%s.outputs[%zu]", where, oi++);
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
            if (!cJSON_IsString(nm)) return fmt_err(e, path, w2, "needs a string \"name\"");
            nb_entry *x = &nb->e[nb->n];
            x->fixture = (int)k->valuedouble;
            x->name = onp_arena_strndup(&nb->a, nm->valuestring, strlen(nm->valuestring));
            if (!x->name) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
            if (read_stats(o, path, w2, &x->n, e)) return -1;
            nb->n++;
            add_rel(nb, x);
        }
    }
    return 0;
}

/* adequacy.output_roles: [{name, logits, why}] (python/onnxparity/_roles.py). */
static int parse_roles(onp_noisebook *nb, const cJSON *ad, const char *path, onp_error *e)
{
    const cJSON *roles =
        cJSON_IsObject(ad) ? cJSON_GetObjectItemCaseSensitive(ad, "output_roles") : NULL;
    if (!roles) return 0;
    if (!cJSON_IsArray(roles)) return fmt_err(e, path, "adequacy.output_roles", "not an array");
    size_t n = (size_t)cJSON_GetArraySize(roles), i = 0;
    nb->role = onp_arena_array(&nb->a, n ? n : 1, sizeof *nb->role);
    if (!nb->role) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    const cJSON *r;
    cJSON_ArrayForEach(r, roles)
    {
        char where[64];
        snprintf(where, sizeof where, "adequacy.output_roles[%zu]", i++);
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(r, "name");
        const cJSON *lg = cJSON_GetObjectItemCaseSensitive(r, "logits");
        if (!cJSON_IsString(nm) || !cJSON_IsBool(lg))
            return fmt_err(e, path, where, "needs a string \"name\" and a boolean \"logits\"");
        nb_role *x = &nb->role[nb->n_role++];
        x->name = onp_arena_strndup(&nb->a, nm->valuestring, strlen(nm->valuestring));
        if (!x->name) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
        x->logits = cJSON_IsTrue(lg);
    }
    return 0;
}

int onp_noisebook_from_manifest(const onp_manifest *mf, onp_noisebook **out, onp_error *e)
{
    *out = NULL;
    const char *path = onp_manifest_path(mf);
    onp_noisebook *nb = calloc(1, sizeof *nb);
    if (!nb) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    const cJSON *doc = onp_manifest_doc(mf);
    int rc = 0;
    if (doc && !cJSON_IsObject(doc))
        rc = fmt_err(e, path, NULL, "not a JSON object (a parity.json manifest was expected)");
    const cJSON *noise = doc ? cJSON_GetObjectItemCaseSensitive(doc, "noise") : NULL;
    const cJSON *det = doc ? cJSON_GetObjectItemCaseSensitive(doc, "determinism") : NULL;
    const cJSON *dv = cJSON_IsObject(det) ? cJSON_GetObjectItemCaseSensitive(det, "verdict") : NULL;
    nb->eager_random = cJSON_IsString(dv) && (!strcmp(dv->valuestring, "nondeterministic") ||
                                              !strcmp(dv->valuestring, "state-drift"));
    if (!rc && noise && !cJSON_IsNull(noise)) rc = parse(nb, noise, path, e);
    if (!rc && doc)
        rc = parse_roles(nb, cJSON_GetObjectItemCaseSensitive(doc, "adequacy"), path, e);
    if (rc) {
        onp_noisebook_free(nb);
        return -1;
    }
    *out = nb;
    return 0;
}

int onp_noisebook_read(const char *parity_json, onp_noisebook **out, onp_error *e)
{
    *out = NULL;
    onp_manifest *mf;
    if (onp_manifest_open(parity_json, &mf, e)) return -1;
    int rc = onp_noisebook_from_manifest(mf, out, e);
    onp_manifest_free(mf);
    return rc;
}

const char *onp_noisebook_reference(const onp_noisebook *nb)
{
    return nb ? nb->reference : NULL;
}

const char *onp_noisebook_reason(const onp_noisebook *nb)
{
    return nb ? nb->reason : NULL;
}

int onp_noisebook_logits(const onp_noisebook *nb, const char *name)
{
    for (size_t i = 0; nb && name && i < nb->n_role; i++)
        if (!strcmp(nb->role[i].name, name)) return nb->role[i].logits;
    return -1;
}

int onp_noisebook_eager_random(const onp_noisebook *nb)
{
    return nb ? nb->eager_random : 0;
}

size_t onp_noisebook_covered(const onp_noisebook *nb)
{
    return nb ? nb->covered : 0;
}

int onp_noisebook_lookup(const onp_noisebook *nb, int fixture, const char *name,
                         const onp_value_stats *vs, onp_noise *out)
{
    if (!nb || !name) return 0;
    for (size_t i = 0; i < nb->n; i++)
        if (nb->e[i].fixture == fixture && !strcmp(nb->e[i].name, name)) {
            *out = nb->e[i].n;
            return 1;
        }
    for (size_t i = 0; vs && i < nb->n_rel; i++)
        if (!strcmp(nb->rel[i].name, name)) {
            memset(out, 0, sizeof *out);
            out->src = ONP_NOISE_SCALED;
            out->scale_max = vs->scale_max;
            out->scale_rms = vs->scale_rms;
            out->max_abs = nb->rel[i].rel_max * vs->scale_max;
            out->rms = nb->rel[i].rel_rms * vs->scale_rms;
            return 1;
        }
    return 0;
}

void onp_noisebook_free(onp_noisebook *nb)
{
    if (!nb) return;
    onp_arena_free(&nb->a);
    free(nb);
}
