/*
 * manifest_int.h — the manifest open (include/onnxparity/manifest.h) with a
 * reader's own wording, for the path readers whose messages and leniency
 * predate the manifest object: onp_adequacy_read and onp_env_from_bundle
 * say "not valid JSON" and accept a document that is not an object (it
 * then holds none of their keys).  Internal to the library.
 */
#ifndef ONP_UTIL_MANIFEST_INT_H
#define ONP_UTIL_MANIFEST_INT_H

#include "onnxparity/manifest.h"

/* onp_manifest_open, but with `bad_json` as the message for text that is
 * not strict JSON, and, when require_object is 0, a document of any JSON
 * type kept as is (onp_manifest_doc then returns it: a reader must check
 * its type).  Errors and ownership as onp_manifest_open. */
int onp_manifest_open_as(const char *path, const char *bad_json, int require_object,
                         onp_manifest **out, onp_error *e);

#endif
