/*
 * jspec.c — the typed check of a JSON tree against a table of member
 * types (include/onnxparity/jspec.h).  Depends on util (error) and cJSON
 * only; allocates nothing.  The path of the value being checked is kept in
 * one buffer on the stack, extended by ".key" or "[i]" on the way down and
 * cut back on the way up.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/json.h"
#include "onnxparity/jspec.h"

/* The path so far: "fixtures[0].outputs[1]"; `len` bytes used. */
typedef struct jpath {
    char s[256];
    size_t len;
} jpath;

typedef struct jwalk {
    jpath path;
    const char *file;
    onp_error *e;
} jwalk;

/* Append ".key" (no dot at the start) or "[i]"; returns the old length to
 * restore.  A path past the buffer keeps its head (the message still names
 * where the value sits, cut short). */
static size_t path_push(jpath *p, const char *key, size_t index)
{
    size_t old = p->len, room = sizeof p->s - p->len;
    int w = key ? snprintf(p->s + p->len, room, "%s%s", p->len ? "." : "", key)
                : snprintf(p->s + p->len, room, "[%zu]", index);
    p->len = w < 0 ? old : (size_t)w >= room ? sizeof p->s - 1 : p->len + (size_t)w;
    return old;
}

static void path_pop(jpath *p, size_t old)
{
    p->len = old;
    p->s[old] = '\0';
}

/* A number (or, with ONP_J_NONFINITE, one of the strings) within the
 * bounds `types` asks for. */
static int number_ok(const cJSON *v, unsigned types)
{
    double d;
    if (cJSON_IsNumber(v))
        d = v->valuedouble;
    else if (!(types & ONP_J_NONFINITE) || !cJSON_IsString(v) || onp_json_real(v, &d))
        return 0;
    if ((types & ONP_J_WHOLE) && !(isfinite(d) && d == floor(d))) return 0;
    if ((types & ONP_J_MIN0) && d < 0) return 0;
    if ((types & ONP_J_MAX1) && d > 1) return 0;
    return 1;
}

static int type_ok(const cJSON *v, unsigned types)
{
    if (!types) return 1;
    return ((types & ONP_J_NULL) && cJSON_IsNull(v)) || ((types & ONP_J_BOOL) && cJSON_IsBool(v)) ||
           ((types & ONP_J_STRING) && cJSON_IsString(v)) ||
           ((types & ONP_J_ARRAY) && cJSON_IsArray(v)) ||
           ((types & ONP_J_OBJECT) && cJSON_IsObject(v)) ||
           ((types & ONP_J_NUMBER) && number_ok(v, types));
}

const char *onp_jspec_words(unsigned types, char *buf, size_t n)
{
    if (!n) return buf;
    buf[0] = '\0';
    if (!types) {
        snprintf(buf, n, "any value");
        return buf;
    }
    char num[48];
    snprintf(num, sizeof num, "%s%s", types & ONP_J_WHOLE ? "a whole number" : "a number",
             (types & ONP_J_MIN0) && (types & ONP_J_MAX1) ? " from 0 to 1"
             : types & ONP_J_MIN0                         ? " >= 0"
             : types & ONP_J_MAX1                         ? " <= 1"
                                                          : "");
    const struct {
        unsigned bit;
        const char *word;
    } parts[] = {{ONP_J_NUMBER, num},           {ONP_J_STRING, "a string"},
                 {ONP_J_BOOL, "true or false"}, {ONP_J_ARRAY, "an array"},
                 {ONP_J_OBJECT, "an object"},   {ONP_J_NULL, "null"}};
    size_t k = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!(types & parts[i].bit) || k >= n) continue;
        int w = snprintf(buf + k, n - k, "%s%s", k ? " or " : "", parts[i].word);
        if (w > 0) k += (size_t)w;
    }
    return buf;
}

static int refuse(jwalk *w, const char *fmt, const char *what)
{
    return onp_error_set(w->e, ONP_ERR_INPUT, w->file, w->path.s, -1, fmt, what);
}

static int check_value(jwalk *w, const cJSON *v, const onp_jspec *spec)
{
    if (!spec) return 0;
    if (!type_ok(v, spec->types)) {
        char words[160];
        return refuse(w, "not %s", onp_jspec_words(spec->types, words, sizeof words));
    }
    if (spec->items && cJSON_IsArray(v)) {
        size_t i = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, v)
        {
            size_t old = path_push(&w->path, NULL, i++);
            int rc = check_value(w, c, spec->items);
            path_pop(&w->path, old);
            if (rc) return -1;
        }
    }
    for (const onp_jfield *f = cJSON_IsObject(v) ? spec->fields : NULL; f && f->key; f++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, f->key);
        size_t old = path_push(&w->path, f->key, 0);
        int rc = m ? check_value(w, m, f->spec) : f->required ? refuse(w, "%s", "missing") : 0;
        path_pop(&w->path, old);
        if (rc) return -1;
    }
    return check_value(w, v, spec->also);
}

int onp_jspec_check(const cJSON *v, const onp_jspec *spec, const char *file, onp_error *e)
{
    jwalk w;
    w.path.s[0] = '\0';
    w.path.len = 0;
    w.file = file;
    w.e = e;
    return check_value(&w, v, spec);
}
