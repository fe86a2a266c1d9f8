/*
 * jspec.h — typed reading of JSON documents: the type every member of a
 * document must have, written as tables, and one check of a parsed tree
 * against them that names the first member of the wrong type by its path.
 *
 * Strict parsing (json.h) says a document is JSON; it says nothing about a
 * `max_abs` of "x", [] or -1, or a `pass` of "yes", which a reader walking
 * the tree with cJSON_IsNumber/cJSON_IsTrue quietly reads as absent or
 * false (`diff` counted them as unchanged or improved).  A reader checks
 * the whole document once, before it reads anything, and then reads it
 * knowing the types:
 *
 *     const onp_jspec *spec = onp_jspec_of("onnxparity.check/1");
 *     if (onp_jspec_check(doc, spec, "a.json", &e)) return -1;
 *     // e: "a.json: fixtures[0].outputs[1].max_abs: not a number >= 0"
 *
 * What a table says (docs/schemas/, in the words of JSON Schema): the
 * types a value may have (`"type": [...]`), the element type of an array
 * (`items`), the members of an object that are checked when present, or
 * required (`properties`, `required`), and a second spec the same value
 * must also meet (`allOf`).  Members a table does not list are accepted
 * unchecked, as the published schemas allow.  Enumerations and patterns
 * are not checked: a reader shows an unknown verdict as unknown, it does
 * not misread it.
 *
 * Numbers: the result documents write NaN and infinities as the strings
 * "nan", "inf" and "-inf" (onp_doc_num); ONP_J_NONFINITE accepts those
 * strings where a number is expected, and onp_json_real (json.h) reads
 * them back.  A bound (ONP_J_MIN0, ONP_J_MAX1) lets NaN through (a value
 * not measured) and refuses an infinity on its wrong side.
 *
 * The tables of the result documents the tool reads (check, bisect,
 * diagnose, sweep, gate) are onp_jspec_of's; how to add one: a table in
 * src/util/docspec.c following its schema file, and its row in `docs[]`
 * there.  Pure functions of their arguments: no allocation, no globals.
 */
#ifndef ONNXPARITY_JSPEC_H
#define ONNXPARITY_JSPEC_H

#include <stddef.h>

#include "onnxparity/error.h"

struct cJSON;

/* The types a value may have: a bit set; 0 accepts anything. */
enum {
    ONP_J_NULL = 1u << 0,
    ONP_J_BOOL = 1u << 1,
    ONP_J_NUMBER = 1u << 2, /* a JSON number */
    ONP_J_STRING = 1u << 3,
    ONP_J_ARRAY = 1u << 4,
    ONP_J_OBJECT = 1u << 5,
    /* refinements of ONP_J_NUMBER */
    ONP_J_NONFINITE = 1u << 6, /* "nan", "inf", "-inf" are numbers too */
    ONP_J_WHOLE = 1u << 7,     /* no fraction (JSON Schema's integer); never NaN */
    ONP_J_MIN0 = 1u << 8,      /* not below 0 */
    ONP_J_MAX1 = 1u << 9,      /* not above 1 */
};
/* common-1.json's real (a number, finite or not), count and integer */
#define ONP_J_REAL (ONP_J_NUMBER | ONP_J_NONFINITE)
#define ONP_J_COUNT (ONP_J_NUMBER | ONP_J_WHOLE | ONP_J_MIN0)
#define ONP_J_INT (ONP_J_NUMBER | ONP_J_WHOLE)

typedef struct onp_jspec onp_jspec;

/* One member of an object.  A table of them ends with {NULL}. */
typedef struct onp_jfield {
    const char *key;       /* the member's name; NULL ends the table */
    const onp_jspec *spec; /* what its value must be */
    int required;          /* 1: a document without it is refused ("missing") */
} onp_jfield;

struct onp_jspec {
    unsigned types;           /* ONP_J_* accepted; 0: any value */
    const onp_jspec *items;   /* an array's every element (NULL: unchecked) */
    const onp_jfield *fields; /* an object's members (NULL: unchecked) */
    const onp_jspec *also;    /* a second spec the value must meet too (NULL: none) */
};

/* 0 when `v` (a whole document, or any value of one) meets `spec`; -1
 * otherwise with `e` filled: ONP_ERR_INPUT (exit 2), file `file`, field
 * the path of the first value that does not ("fixtures[0].outputs[1].max_abs";
 * "" for `v` itself) and the message "not <what spec accepts>" (e.g. "not
 * a number >= 0", "not a string or null") or "missing".  Values are
 * visited in document order; the walk follows the tables, so its depth is
 * theirs, whatever the document's. */
int onp_jspec_check(const struct cJSON *v, const onp_jspec *spec, const char *file, onp_error *e);

/* What `types` accepts, in words ("a whole number >= 0", "a string or
 * null", "any value"), into buf (n bytes, cut to fit); returns buf. */
const char *onp_jspec_words(unsigned types, char *buf, size_t n);

/* The table of the result document with schema id `schema`
 * ("onnxparity.check/1", "onnxparity.bisect/1", "onnxparity.diagnose/1",
 * "onnxparity.sweep/1", "onnxparity.gate/1"), as docs/schemas/ publish it:
 * every member a reader of the tool reads (diff, report) with its
 * type.  NULL for any other id or NULL. */
const onp_jspec *onp_jspec_of(const char *schema);

#endif
