/*
 * ort_internal.h — what the files of src/ort/ share: the layout of onp_ort
 * and onp_session, and the OrtStatus-to-onp_error bridge.  Only src/ort/
 * includes this file, and only src/ort/ includes onnxruntime_c_api.h.
 *
 *   ort.c          loading the library, the OrtEnv, ORT's log
 *   ort_ep.c       execution providers: names, the table, appending one
 *   ort_session.c  session options, session creation, introspection
 *   ort_run.c      tensors in and out of OrtValues, Run
 *   ort_worker.c   sessions in a worker process (onp_session_opts.isolate)
 */
#ifndef ONP_ORT_INTERNAL_H
#define ONP_ORT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <onnxruntime_c_api.h>

#include "onnxparity/ort.h"
#include "onnxparity/precision.h"
#include "util/arena.h"
#include "util/strmap.h"

struct onp_ort {
    atomic_int refs;      /* the opener's + one per open session */
    void *dl;             /* dlopen handle (never dlclose'd) */
    const OrtApi *api;    /* the table for api_version */
    uint32_t api_version; /* ONP_ORT_MIN_API .. ORT_API_VERSION */
    OrtEnv *env;          /* one reference on ORT's process-wide env; made on first
                             need (onp_ort_env_ready), under env_mu */
    pthread_mutex_t env_mu;
    OrtAllocator *alloc;    /* ORT's default CPU allocator; not owned */
    OrtMemoryInfo *cpu_mem; /* describes caller-owned CPU buffers; owned */
    char *path;             /* absolute path of the file loaded; owned */
    char *version;          /* "1.29.0"; owned */
    char *build_info;       /* owned */
    char **providers;       /* [n_providers] owned names, ORT's order */
    size_t n_providers;
    pthread_mutex_t sha_mu; /* guards lib_sha256 */
    char lib_sha256[65];    /* the library file's sha256 once hashed, else "" */
};

struct onp_session {
    onp_ort *ort;          /* referenced */
    OrtSession *sess;      /* owned */
    onp_arena arena;       /* names, dims, notes */
    onp_session_desc desc; /* strings in arena */
    size_t n_in, n_out, n_init;
    onp_ort_io *in;            /* [n_in], in arena */
    onp_ort_io *out;           /* [n_out], in arena */
    onp_ort_io *init;          /* [n_init] overridable initializers, in arena */
    struct onp_worker *worker; /* non-NULL: the OrtSession lives in a worker process
                                  (ort_worker.c) and `sess` is NULL; owned */
    /* name -> index into in/out/init (the first of equal names): lookups in
     * O(1), so a run that fetches N named outputs costs O(N), not O(N^2) */
    onp_strmap in_at, out_at, init_at;
    /* what the target computes in (precision.h; desc.precision points here) */
    onp_precision precision;
};

/* Index the names of s->in, s->out and s->init (filled) for
 * onp_session_find_*.  0, or -1 when out of memory.  (ort_session.c) */
int onp_session_index_names(onp_session *s);

/* Create the library's OrtEnv if it has none yet (thread-safe).  0, or -1 +
 * ONP_ERR_RUNTIME.  (ort.c) */
int onp_ort_env_ready(onp_ort *ort, onp_error *e);

/* Add one line ("warning: MESSAGE") to the process's ORT log ring, as if ORT
 * had logged it: how a worker's log reaches its parent.  (ort.c) */
void onp_ort_log_add(const char *line);

/* Open a session in this process (the whole of onp_session_open*, minus the
 * isolation switch): `path` or `bytes`/`n`.  (ort_session.c) */
int onp_session_open_local(onp_ort *ort, const char *path, const void *bytes, size_t n,
                           const char *label, const onp_session_opts *o, onp_session **out,
                           onp_error *e);

/* Open a session whose OrtSession lives in a forked worker process; same
 * contract as onp_session_open_local.  The worker keeps private copies of
 * the model bytes (or path) and the options, to start again after a crash.
 * (ort_worker.c) */
int onp_worker_open(onp_ort *ort, const char *path, const void *bytes, size_t n, const char *label,
                    const onp_session_opts *o, onp_session **out, onp_error *e);

/* onp_session_run for a session with a worker, after onp_session_run's
 * own checks of its arguments (outputs zeroed, n_outputs already the count
 * to fetch when output_names is NULL).  (ort_worker.c) */
int onp_worker_run(onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                   const char *const *output_names, size_t n_outputs, onp_tensor *outputs,
                   onp_error *e);

/* The bytes of output `name` as its declaration predicts them for these
 * inputs: fixed dims as declared, symbolic ones ("batch") as the inputs
 * that declare the same name bind them.  0 when some dim stays unknown,
 * the output is a scalar, has no declared shape or is not numeric, or the
 * inputs do not match the session.  (ort_run.c) */
size_t onp_session_output_bytes(const onp_session *s, const char *name, const onp_tensor *inputs,
                                size_t n_inputs);

/* onp_session_run, where bufs (NULL, or [n_outputs] entries, NULL or not)
 * gives for output i a buffer of onp_session_output_bytes bytes that
 * ORT writes the output into (no copy out of ORT's own memory): outputs[i]
 * then views bufs[i], which must outlive it.  A model whose output is not
 * of its declared shape fails the run (ORT: shape mismatch); the caller
 * may run again without bufs.  In-process sessions only: a session with a
 * worker ignores bufs.  (ort_run.c) */
int onp_session_run_into(onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                         const char *const *output_names, size_t n_outputs, onp_tensor *outputs,
                         void *const *bufs, onp_error *e);

/* Stop the worker (SIGKILL, reaped) and free what it holds.  Accepts NULL.
 * (ort_worker.c) */
void onp_worker_free(struct onp_worker *w);

/* Take / drop a reference on the library handle (onp_ort_close drops one). */
void onp_ort_ref(onp_ort *ort);
void onp_ort_unref(onp_ort *ort);

/* Turn a failed OrtStatus into ONP_ERR_RUNTIME (field "CALL [ORT_CODE]",
 * msg = ORT's message verbatim, file = `file`), release the status, and
 * return -1.  With st == NULL it returns 0 and touches nothing, so calls can
 * be written `if (onp_ort_status(ort, api->X(...), "X", file, e)) goto fail;`. */
int onp_ort_status(const onp_ort *ort, OrtStatus *st, const char *call, const char *file,
                   onp_error *e);

/* The ORT name ("CUDAExecutionProvider") of a provider the user named
 * ("cuda", any case, or a full name), or NULL when it is neither in the
 * provider table nor offered by the library.  (ort_ep.c) */
const char *onp_ort_ep_canonical(const onp_ort *ort, const char *name);

/* Append the provider named in o->provider (with o->provider_opts) to `so`
 * and set *ort_name to ORT's name for it (static storage, or a string owned
 * by `ort`).  The CPU provider appends nothing.  ONP_ERR_USAGE for an
 * unknown or absent provider or malformed options, ONP_ERR_RUNTIME when ORT
 * refuses (e.g. CUDA libraries missing).  (ort_ep.c) */
int onp_ort_ep_append(onp_ort *ort, OrtSessionOptions *so, const onp_session_opts *o,
                      const char *file, const char **ort_name, onp_error *e);

/* "A, B, C": the library's providers, into buf (truncated to n). */
char *onp_ort_provider_list(const onp_ort *ort, char *buf, size_t n);

/* Split "KEY=VALUE" at the first '=': *key is a malloc'd copy of KEY (the
 * caller frees it), *value points into s.  0, or -1 + ONP_ERR_USAGE naming
 * `what` when there is no '=' or KEY is empty. */
int onp_ort_split_kv(const char *s, const char *what, char **key, const char **value, onp_error *e);

#endif
