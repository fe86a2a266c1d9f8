/*
 * json.h — strict reading of the JSON documents onnxparity reads (criteria,
 * parity.json, result documents for merge and report, the intermediates
 * index).
 *
 * "Strict" means what Python's json module and RFC 8259 agree on, plus the
 * two things a lax parser lets through and that changed verdicts here:
 *   - exactly one value, and only whitespace after it (a second document
 *     appended by `>>`, or NUL bytes after the first, is refused);
 *   - no object holds the same key twice (parsers resolve duplicates
 *     differently, so two readers would see two documents);
 *   - no NUL in a string (a "\u0000" would cut a C string short, so a
 *     limit or a schema would apply to a different name);
 *   - UTF-8 only, no NaN or Infinity, no number that overflows a double,
 *     nesting at most 1000 deep.
 * Numbers are held as doubles (cJSON); onp_json_int() range-checks one into
 * a C integer before any cast.
 *
 * The validation is libjansson's own strict mode (JSON_REJECT_DUPLICATES,
 * its end-of-input check, and no JSON_ALLOW_NUL); the tree returned is the
 * cJSON tree every reader already walks, so a reader changes by one call.
 *
 *     onp_error e;
 *     cJSON *doc = onp_json_parse(text, n, "c.json", ONP_ERR_INPUT, "not valid JSON", &e);
 *     if (!doc) return -1;   // e: "c.json: at byte 17: not valid JSON: duplicate object key"
 *     ...
 *     cJSON_Delete(doc);
 */
#ifndef ONNXPARITY_JSON_H
#define ONNXPARITY_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/error.h"

struct cJSON;

/* Parse the n bytes at p as one strict JSON document.  Returns the tree
 * (the caller owns it: cJSON_Delete), or NULL with `e` filled: code `bad`,
 * file `file`, the byte offset where the parser stopped, and the message
 * "<what>: <reason>" (an allocation failure is ONP_ERR_NOMEM).  p may be
 * NULL when n is 0 (an empty document, refused). */
struct cJSON *onp_json_parse(const void *p, size_t n, const char *file, onp_errcode bad,
                             const char *what, onp_error *e);

/* 0 when v is a number holding an integer within [lo, hi] (stored in *out),
 * -1 otherwise (NULL, not a number, a fraction, NaN, or out of range): the
 * check to make before casting a JSON number into a C integer type. */
int onp_json_int(const struct cJSON *v, int64_t lo, int64_t hi, int64_t *out);

/* 0 when v is a number, or one of the strings "nan", "inf", "-inf" that the
 * result documents write for non-finite values (onp_doc_num), with the
 * value in *out; -1 otherwise (NULL, another string, any other type).  A
 * document checked against its table (jspec.h) holds these where it holds
 * a real. */
int onp_json_real(const struct cJSON *v, double *out);

#endif
