/*
 * env.h — the environment a parity result was measured in, and what changed
 * between two of them.
 *
 * A parity verdict holds for one export (opset, exporter, torch) run under
 * one ONNX Runtime (its version and the exact library file, the provider,
 * the optimization level, the threads, the session config).  Release
 * criteria record that environment (`gate --record`), `gate` compares the
 * recorded one with the one it runs in, and `merge` refuses shards measured
 * in different ones.  This module holds the fields, collects them from a
 * session and a bundle, reads and writes them as JSON members, and decides
 * what a difference means:
 *   - ONP_DRIFT_RUNTIME / ONP_DRIFT_EXPORT: the numbers may move for a
 *     reason that is not the model: a warning by default, a failure under a
 *     strict policy (the CLI's `gate --env-drift fail`);
 *   - ONP_DRIFT_NOTE: expected to change on every build (the model's sha256
 *     after a re-export): reported, never a failure.
 * A field that was not recorded (criteria older than this module, a bundle
 * without parity.json) is not compared.
 *
 * Worked example (error checks shortened):
 *     onp_env now;  onp_env_init(&now);
 *     onp_env_from_session(&now, ort, session, &e);
 *     onp_env_from_bundle(&now, model, "bundle/parity.json", &e);
 *     onp_env_set(&now, ONP_ENV_MODEL_SHA256, sha);
 *     onp_env rec;  onp_env_init(&rec);
 *     onp_env_read_json(&rec, cJSON_GetObjectItem(criteria, "environment"));
 *     onp_env_drift d[ONP_ENV_FIELD_COUNT];
 *     size_t n = onp_env_compare(&rec, &now, d);
 *     for (size_t i = 0; i < n; i++)
 *         printf("%s: %s -> %s\n", onp_env_field_name(d[i].field), d[i].recorded, d[i].current);
 *
 * Values are held as text in fixed buffers: no allocation, nothing to free.
 */
#ifndef ONNXPARITY_ENV_H
#define ONNXPARITY_ENV_H

#include <stddef.h>

#include "onnxparity/error.h"
#include "onnxparity/manifest.h"
#include "onnxparity/model.h"
#include "onnxparity/ort.h"

struct cJSON;

/* The fields, in the order they are reported.  How to add one: a row in
 * src/env/env.c's table (name, kind, whether JSON holds it as a number),
 * then fill it in onp_env_from_session or onp_env_from_manifest
 * (src/judge/envcollect.c). */
typedef enum onp_env_field {
    ONP_ENV_ORT_VERSION,        /* "1.29.0" */
    ONP_ENV_ORT_LIBRARY_SHA256, /* sha256 of the ORT shared library file loaded */
    ONP_ENV_PROVIDER,           /* "CPUExecutionProvider" */
    ONP_ENV_OPT_LEVEL,          /* "all", "basic", ... */
    ONP_ENV_INTRA_THREADS,      /* as asked; "0" = ORT's default */
    ONP_ENV_INTER_THREADS,
    ONP_ENV_SESSION_CONFIG, /* the session config entries, '\n'-separated; "(none)" */
    ONP_ENV_OPSET,          /* the model's ai.onnx opset */
    ONP_ENV_EXPORTER,       /* parity.json "exporter": "legacy" or "dynamo" */
    ONP_ENV_TORCH_VERSION,  /* parity.json "versions.torch" */
    ONP_ENV_MODEL_SHA256,
    ONP_ENV_FIELD_COUNT
} onp_env_field;

typedef enum onp_drift_kind {
    ONP_DRIFT_RUNTIME, /* ONNX Runtime or its settings differ */
    ONP_DRIFT_EXPORT,  /* the export differs (opset, exporter, torch) */
    ONP_DRIFT_NOTE,    /* differs on every build; never a failure */
    ONP_DRIFT_KIND_COUNT
} onp_drift_kind;

#define ONP_ENV_VALUE_MAX 512

typedef struct onp_env {
    char v[ONP_ENV_FIELD_COUNT][ONP_ENV_VALUE_MAX]; /* "" = not known / not recorded */
} onp_env;

typedef struct onp_env_drift {
    onp_env_field field;
    onp_drift_kind kind;
    const char *recorded; /* points into the `rec` given to onp_env_compare */
    const char *current;  /* into `now`; "" when the current value is unknown */
} onp_env_drift;

/* Every field empty. */
void onp_env_init(onp_env *env);

/* The JSON member name of a field ("ort_version", ...), and the reverse
 * (ONP_ENV_FIELD_COUNT for an unknown name). */
const char *onp_env_field_name(onp_env_field f);
onp_env_field onp_env_field_find(const char *name);

/* What a difference in field f means, and the kind's name ("runtime",
 * "export", "note"). */
onp_drift_kind onp_env_field_kind(onp_env_field f);
const char *onp_drift_kind_name(onp_drift_kind k);

/* Set one field (truncated to ONP_ENV_VALUE_MAX - 1 bytes; NULL = ""). */
void onp_env_set(onp_env *env, onp_env_field f, const char *value);

/* The session config entries (`n` strings, in order); none is recorded as
 * "(none)", so that "no entries" and "not recorded" differ. */
void onp_env_set_config(onp_env *env, const char *const *entries, size_t n);

/* The runtime fields from a loaded library and an open session: version,
 * the sha256 of the library file (ONP_ERR_IO when it cannot be read),
 * provider, optimization level, threads.  The session config is the
 * caller's to set (ORT does not report it back). */
int onp_env_from_session(onp_env *env, const onp_ort *ort, const onp_session *s, onp_error *e);

/* The export fields: the opset from the model, exporter and torch version
 * from the capture's manifest (`parity_json` may be NULL or a missing file:
 * those fields stay empty).  The model's sha256 is the caller's to set (the
 * CLI hashes the model while ORT loads it).  ONP_ERR_FORMAT for a manifest
 * that is not JSON. */
int onp_env_from_bundle(onp_env *env, const onp_model *m, const char *parity_json, onp_error *e);

/* The same from a manifest already open (manifest.h), which stays the
 * caller's; mf NULL (a bundle without parity.json) sets the opset only.
 * Never fails once the manifest is open: 0. */
int onp_env_from_manifest(onp_env *env, const onp_model *m, const onp_manifest *mf, onp_error *e);

/* 0 when every field the "environment" object `obj` holds has its type: a
 * whole number >= 0 for the numeric fields (threads, opset), an array of
 * strings for the session config, a string for the rest; members of other
 * names are not this table's and are let through.  Else -1 with *field the
 * member's name and *why what it should be (a document read back, the
 * criteria, must not turn a wrong type into "no drift"). */
int onp_env_check_json(const struct cJSON *obj, const char **field, const char **why);

/* Read the fields an "environment" object holds (numbers as integers,
 * arrays of strings '\n'-joined, anything else left empty); fields already
 * set and not in the object are kept.  `obj` may be NULL. */
void onp_env_read_json(onp_env *env, const struct cJSON *obj);

/* Add every known field that `obj` does not already hold as a member (so an
 * environment written by another writer keeps its members).  Numbers for
 * the numeric fields, an array for the session config.  0, or -1 when
 * memory ran out. */
int onp_env_write_json(const onp_env *env, struct cJSON *obj);

/* The fields that differ between `rec` (recorded) and `now`: fields empty
 * in `rec` are not compared.  Fills out[0..n-1] in field order (out holds
 * ONP_ENV_FIELD_COUNT entries) and returns n.  The pointers in out point
 * into rec and now. */
size_t onp_env_compare(const onp_env *rec, const onp_env *now, onp_env_drift *out);

#endif
