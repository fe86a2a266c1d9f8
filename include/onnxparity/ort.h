/*
 * ort.h — running models with ONNX Runtime: the only code in onnxparity that
 * touches ONNX Runtime (ORT).
 *
 * ORT is never linked: onp_ort_open() loads a libonnxruntime.so with dlopen,
 * asks it for its C API; the process's OrtEnv is created when the first
 * in-process session needs it (an isolated session's worker makes its own,
 * so a parent that only isolates never starts an ORT thread).  Everything else
 * in onnxparity builds, tests and fuzzes without ORT, and one process can
 * hold two different ORT libraries side by side (one onp_ort each; tried
 * with 1.29 and 1.30, both named libonnxruntime.so.1, loaded RTLD_LOCAL).
 *
 * Three objects, each owned by whoever opened it:
 *   onp_ort      a loaded ORT library: its path, version string, C API
 *                version, execution providers.
 *   onp_session  one model loaded once with one set of options, then run
 *                many times (one session, many fixtures).  A session keeps
 *                its onp_ort alive, so handles may be closed in any order.
 *   onp_tensor   inputs and outputs (include/onnxparity/tensor.h).
 *
 * Worked example (error checks shortened to "...", which must release what
 * was opened so far):
 *
 *     onp_error e;
 *     char buf[1024];
 *     onp_ort *ort;
 *     if (onp_ort_open(NULL, &ort, &e) != 0) ...;          // search the usual places
 *     printf("ONNX Runtime %s from %s\n", onp_ort_version(ort), onp_ort_lib_path(ort));
 *
 *     onp_session_opts o = {0};                              // CPU, ORT's defaults
 *     o.opt_level = ONP_ORT_OPT_DISABLE;
 *     const char *cfg[] = {"session.intra_op.allow_spinning=0"};
 *     o.config = cfg;
 *     o.n_config = 1;
 *     onp_session *s;
 *     if (onp_session_open(ort, "model.onnx", &o, &s, &e) != 0) ...;
 *     onp_ort_close(ort);                                    // s keeps the library alive
 *
 *     const onp_ort_io *in0 = onp_session_input(s, 0);       // "x", float32 [N, 3]
 *     onp_tensor x;
 *     int64_t dims[2] = {2, 3};
 *     if (onp_tensor_alloc(&x, ONP_FLOAT, 2, dims, &e) != 0) ...;
 *     if (onp_tensor_set_name(&x, in0->name, &e) != 0) ...;
 *     // ... fill x.data ...
 *
 *     size_t n = onp_session_output_count(s);
 *     onp_tensor *y = calloc(n, sizeof *y);
 *     if (onp_session_run(s, &x, 1, NULL, 0, y, &e) != 0)    // NULL, 0: every output
 *         fprintf(stderr, "%s\n", onp_error_format(&e, buf, sizeof buf));
 *     for (size_t i = 0; i < n; i++) onp_tensor_release(&y[i]);
 *     free(y);
 *     onp_tensor_release(&x);
 *     onp_session_close(s);
 *
 * Errors (include/onnxparity/error.h):
 *   ONP_ERR_IO       no library could be loaded (the message lists every path
 *                    tried and why), or a model file cannot be read;
 *   ONP_ERR_USAGE    bad options, unknown provider or optimization level, an
 *                    input of the wrong dtype or shape, unknown or missing
 *                    input or output names, outputs that are not tensors;
 *   ONP_ERR_RUNTIME  ORT refused: `msg` is ORT's own message, verbatim (made
 *                    one line), and `field` names the ORT call and ORT's error
 *                    code, e.g. "Run [ORT_INVALID_ARGUMENT]";
 *   ONP_ERR_NOMEM    an allocation failed.
 * `file` is the model path (or the label given for a model in memory).
 *
 * ORT's own log: warnings and errors that ORT logs never reach stderr.  They
 * are kept, process-wide, in a small ring (the latest 32 messages) that
 * onp_ort_log_take() drains, e.g. to attach "some nodes were not assigned to
 * the preferred execution provider" to a report.  For debugging, the
 * environment variable ONNXPARITY_ORT_LOG=verbose|info|warning|error|fatal
 * also copies messages of that severity and above to stderr.
 *
 * Threads: onp_session_run() may be called from several threads at once on
 * one session (ORT's Run is thread-safe; onnxparity keeps no per-run state in
 * the session; an isolated session serializes the calls to its worker).  Opening and closing
 * handles must not race with their use.
 */
#ifndef ONNXPARITY_ORT_H
#define ONNXPARITY_ORT_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/error.h"
#include "onnxparity/tensor.h"

/* The lowest ORT C API version onnxparity uses (ORT 1.16).  A newer library
 * is asked for the API of the headers onnxparity was built with; an older
 * one for the highest it offers, down to this. */
#define ONP_ORT_MIN_API 16

typedef struct onp_ort onp_ort;
typedef struct onp_session onp_session;

/* --- the library ---------------------------------------------------------- */

/* Load ONNX Runtime (the OrtEnv comes later, with the first in-process
 * session).
 *
 * `lib_path` (the CLI's --ort-lib) is the library to load; NULL or "" means
 * search, in this order, and stop at the first that loads:
 *   1. $ONNXPARITY_ORT_LIB, when set and not empty (then only that file);
 *   1b. when built with ORT_HOME=DIR: DIR/lib/libonnxruntime.so.1, then .so;
 *   2. <dir of /proc/self/exe>/../lib/onnxparity/libonnxruntime.so.1 (where
 *      `make install` and the pip wheel put the copy they ship), then
 *      <dir of /proc/self/exe>/../third_party/onnxruntime/lib/libonnxruntime.so.1
 *      and <dir of /proc/self/exe>/../../third_party/... (a test binary lives
 *      one level deeper, in build/tests/);
 *   2b. where the code runs from a shared libonnxparity.so.N (a binding's
 *      process, whose executable is Python): <its dir>/onnxparity/
 *      libonnxruntime.so.1 (make install, the wheel), then <its dir>/../
 *      third_party/onnxruntime/lib/libonnxruntime.so.1 (the source tree);
 *   3. ./third_party/onnxruntime/lib/libonnxruntime.so.1 (current directory);
 *   4. "libonnxruntime.so.1" through the system loader (LD_LIBRARY_PATH,
 *      ld.so.cache, ...).
 * An explicit path, or $ONNXPARITY_ORT_LIB, is never replaced by another
 * library when it fails to load: a version comparison must not silently run
 * against the wrong build.
 *
 * The C API requested is ORT_API_VERSION of the headers onnxparity was built
 * with, or the highest below it that the library offers (ORT's C API version
 * equals its minor version), but never below ONP_ORT_MIN_API.  Functions
 * newer than the API obtained are not called; options that need them are
 * refused (see onp_session_opts).
 *
 * Before loading, $ORT_DISABLE_TELEMETRY is set to 1 where it is not set
 * (setenv, so call it before other threads read the environment): ONNX
 * Runtime's telemetry stays off, and with it the session and debug files
 * some builds write into /tmp and the working folder.
 *
 * On success *out is a new handle the caller owns (onp_ort_close).  Errors:
 * ONP_ERR_IO when nothing loads (every path tried, with the loader's reason)
 * or the file loaded is not ORT; ONP_ERR_RUNTIME when the library offers no
 * API in [ONP_ORT_MIN_API, ORT_API_VERSION].  (An OrtEnv that cannot be
 * created fails the first session open, with ONP_ERR_RUNTIME.) */
int onp_ort_open(const char *lib_path, onp_ort **out, onp_error *e);

/* onp_ort_open, asking for at most C API version `max_api` (0 = the build's
 * ORT_API_VERSION).  For tests of the fallback path and for pinning
 * behaviour; ONP_ERR_USAGE when max_api is below ONP_ORT_MIN_API. */
int onp_ort_open_api(const char *lib_path, uint32_t max_api, onp_ort **out, onp_error *e);

/* Drop the caller's reference.  The OrtEnv is released when the last
 * session made from this handle is closed too.  The shared library itself
 * stays mapped until the process exits (unloading ORT is not reliably safe).
 * Accepts NULL. */
void onp_ort_close(onp_ort *ort);

/* Facts about the loaded library.  Strings are owned by the handle and live
 * as long as it does. */
const char *onp_ort_version(const onp_ort *ort);    /* GetVersionString: "1.29.0" */
const char *onp_ort_lib_path(const onp_ort *ort);   /* absolute path of the file loaded */
uint32_t onp_ort_api_version(const onp_ort *ort);   /* the C API version in use */
const char *onp_ort_build_info(const onp_ort *ort); /* GetBuildInfoString, one line */
/* The sha256 of the library file (onp_ort_lib_path), as lowercase hex into
 * hex[65]: found the first time it is asked for, or when an isolated
 * session's worker starts (the parent hashes while the worker creates its
 * session), and kept for the handle's life: one handle is one load of one
 * file.  Across processes a small cache keeps it, used only while the
 * file's device, inode, size, mtime and ctime are those hashed
 * ($XDG_CACHE_HOME or ~/.cache/onnxparity/ort-sha256; docs/cli.md,
 * ONNXPARITY_NO_CACHE).  0, or -1 with e set (the file cannot be read). */
int onp_ort_lib_sha256(onp_ort *ort, char hex[65], onp_error *e);

/* The execution providers this build offers (GetAvailableProviders, in ORT's
 * order, e.g. "CPUExecutionProvider").  Being listed does not promise that a
 * provider's runtime dependencies (CUDA, cuDNN, ...) are present. */
size_t onp_ort_provider_count(const onp_ort *ort);
const char *onp_ort_provider(const onp_ort *ort, size_t i); /* NULL when i is out of range */

/* 1 when `name` ("cuda", "CUDA", "CUDAExecutionProvider", ...) names a
 * provider this library offers, else 0. */
int onp_ort_has_provider(const onp_ort *ort, const char *name);

/* Move the ORT log messages kept so far (the latest 32, oldest first, one
 * per line, "warning: MESSAGE") into buf as a NUL-terminated string,
 * truncated to n bytes, and forget them.  Returns how many messages ORT
 * logged since the last call, including any the ring had already dropped.
 * buf may be NULL with n == 0 to just clear.  Process-wide: messages from
 * every loaded ORT library land in the same ring. */
size_t onp_ort_log_take(char *buf, size_t n);

/* --- session options ------------------------------------------------------ */

/* Graph optimization levels.  DEFAULT leaves ORT's own default (which is
 * ALL); LAYOUT is ORT_ENABLE_LAYOUT (basic + extended + layout transforms)
 * where the library has it and ALL, with a note, where it does not. */
typedef enum onp_ort_opt_level {
    ONP_ORT_OPT_DEFAULT = 0, /* "default": do not set a level */
    ONP_ORT_OPT_DISABLE,     /* "disable": ORT_DISABLE_ALL */
    ONP_ORT_OPT_BASIC,       /* "basic": ORT_ENABLE_BASIC */
    ONP_ORT_OPT_EXTENDED,    /* "extended": ORT_ENABLE_EXTENDED */
    ONP_ORT_OPT_LAYOUT,      /* "layout": ORT_ENABLE_LAYOUT */
    ONP_ORT_OPT_ALL,         /* "all": ORT_ENABLE_ALL */
    ONP_ORT_OPT_COUNT
} onp_ort_opt_level;

/* The name of a level ("disable", ...), or "?" when out of range. */
const char *onp_ort_opt_level_name(onp_ort_opt_level level);

/* Parse a level name (case-insensitive; "none" and "0".."3", "99" also
 * accepted as ORT spells them).  0, or -1 + ONP_ERR_USAGE naming the valid
 * choices. */
int onp_ort_opt_level_parse(const char *name, onp_ort_opt_level *out, onp_error *e);

/* How a session is made.  A zeroed struct means: CPU provider, ORT's
 * default optimization level and thread counts, no extra configuration.
 * Strings and arrays are only read during onp_session_open*; the caller
 * keeps ownership. */
typedef struct onp_session_opts {
    onp_ort_opt_level opt_level;

    /* Execution provider: NULL, "" or "cpu" for ORT's CPU provider; else a
     * short name ("cuda", "tensorrt", "openvino", "dnnl", "xnnpack", "qnn",
     * "coreml", "webgpu", ...) or ORT's full name ("CUDAExecutionProvider"),
     * any case.  A provider the library does not offer is ONP_ERR_USAGE
     * naming it and listing the ones it does offer.  ORT still runs on the
     * CPU provider whatever nodes the chosen one cannot take. */
    const char *provider;
    /* Provider options, "KEY=VALUE" each (e.g. "device_id=1"). */
    const char *const *provider_opts; /* [n_provider_opts] */
    size_t n_provider_opts;

    int intra_threads; /* threads within a node; 0 = ORT default, >= 0 */
    int inter_threads; /* threads across nodes; 0 = ORT default, >= 0 */

    /* Session configuration entries, "KEY=VALUE" each (AddSessionConfigEntry;
     * keys in onnxruntime_session_options_config_keys.h), e.g.
     * "optimization.disable_specified_optimizers=ConvActivationFusion".
     * ORT accepts keys it does not know without complaint. */
    const char *const *config; /* [n_config] */
    size_t n_config;

    /* Where ORT writes the model after graph optimization, at session
     * creation; NULL = nowhere.  Large models may also need the config entry
     * "session.optimized_model_external_initializers_file_name=NAME". */
    const char *optimized_model_path;

    /* 1 = SetDeterministicCompute(true): deterministic GPU kernels where ORT
     * has them.  Needs C API >= 17 (ORT 1.17); refused with ONP_ERR_USAGE on
     * an older library rather than ignored. */
    int deterministic;

    /* Custom-operator libraries, paths of shared objects that ORT loads and
     * whose RegisterCustomOps it calls (RegisterCustomOpsLibrary_V2), in
     * order, before the model is loaded.  [n_custom_op_libs] */
    const char *const *custom_op_libs;
    size_t n_custom_op_libs;

    /* 1 = the session lives in a worker process (ort_worker.c): ORT is
     * called only there, so a kernel that crashes (SIGSEGV, abort) or never
     * returns costs the call, not the caller's process.  The failed call is
     * ONP_ERR_RUNTIME with field "Run [crashed]" / "Run [timeout]" (or
     * "CreateSession [...]"), naming the signal or the limit; the next run
     * starts a new worker, which loads the model again.  Everything else is
     * as in-process: same results, errors, introspection, ORT log.  The
     * worker is made with fork(): a process should open isolated sessions
     * before it runs any in-process session (ORT's threads do not survive a
     * fork); onp_ort_open itself starts no ORT thread. */
    int isolate;
    /* With isolate: the most milliseconds that one session creation or one
     * run may take before the worker is killed; 0 = no limit.  Refused
     * (ONP_ERR_USAGE) without isolate. */
    int timeout_ms;
} onp_session_opts;

/* --- sessions -------------------------------------------------------------- */

/* Load a model from a file.  Use this form for models with external data
 * (ORT finds the data files relative to the model).  On success *out is a
 * new session the caller owns (onp_session_close); it holds a reference on
 * `ort`.  Errors: ONP_ERR_IO when the file cannot be read, ONP_ERR_USAGE for
 * bad options, ONP_ERR_RUNTIME when ORT refuses the options or the model. */
int onp_session_open(onp_ort *ort, const char *model_path, const onp_session_opts *o,
                     onp_session **out, onp_error *e);

/* Load a model from `n` bytes in memory (CreateSessionFromArray); `label`
 * names it in errors (NULL = "<memory>").  The bytes are only read during
 * the call.  External data, if any, is looked up relative to the current
 * directory: prefer onp_session_open for such models. */
int onp_session_open_bytes(onp_ort *ort, const void *bytes, size_t n, const char *label,
                           const onp_session_opts *o, onp_session **out, onp_error *e);

/* Release the session (and its reference on the library).  Accepts NULL. */
void onp_session_close(onp_session *s);

/* What a session was made with, after any adjustment; for result
 * fingerprints.  Owned by the session. */
typedef struct onp_session_desc {
    const char *model;           /* the path, or the label of a model in memory */
    const char *provider;        /* ORT's name: "CPUExecutionProvider", ... */
    onp_ort_opt_level opt_level; /* the level set (DEFAULT: none set, ORT's is ALL) */
    int intra_threads;           /* as asked; 0 = ORT default */
    int inter_threads;
    int deterministic; /* 1 when SetDeterministicCompute(true) was applied */
    const char *notes; /* "" or "; "-separated notes on what was adjusted */
    /* the precision the target computes a float32 model in, read from the
     * provider, its options, the session config and the provider's defaults
     * (precision.h) */
    const struct onp_precision *precision;
} onp_session_desc;

const onp_session_desc *onp_session_describe(const onp_session *s);
/* 1 when s lives in a worker process (onp_session_opts.isolate): its runs
 * pass the inputs' bytes to that process, never their addresses to ORT. */
int onp_session_isolated(const onp_session *s);

/* --- introspection --------------------------------------------------------- */

/* What a graph input or output is, as ORT reports it.  Kinds use ORT's
 * ONNXType numbering. */
typedef enum onp_ort_kind {
    ONP_ORT_KIND_UNKNOWN = 0,
    ONP_ORT_KIND_TENSOR = 1,
    ONP_ORT_KIND_SEQUENCE = 2,
    ONP_ORT_KIND_MAP = 3,
    ONP_ORT_KIND_OPAQUE = 4,
    ONP_ORT_KIND_SPARSE = 5,
    ONP_ORT_KIND_OPTIONAL = 6
} onp_ort_kind;

/* One graph input or output.  All strings are owned by the session. */
typedef struct onp_ort_io {
    const char *name;
    int kind;                   /* onp_ort_kind; an optional's dtype/shape are those it holds */
    int32_t dtype;              /* ONNX element type (onp_dtype numbering; may exceed
                                   ONP_DTYPE_COUNT for float8/int4/... types, given in
                                   ONNX's numbering: ORT's enum differs from 24 up);
                                   0 when not a tensor */
    int rank;                   /* 0 means a scalar OR no declared shape: ORT's API does
                                   not tell them apart, so the pre-run check lets any
                                   rank through; ORT 1.29 does not check either (it runs
                                   a [2, 3] tensor through a declared scalar input) */
    int64_t dims[ONP_MAX_RANK]; /* [rank]; -1 where not fixed */
    const char *dim_names[ONP_MAX_RANK]; /* [rank]; symbolic name ("N") or NULL */
} onp_ort_io;

size_t onp_session_input_count(const onp_session *s);
size_t onp_session_output_count(const onp_session *s);
/* The i-th graph input / output in ORT's order (graph order, initializers
 * excluded), or NULL when i is out of range. */
const onp_ort_io *onp_session_input(const onp_session *s, size_t i);
const onp_ort_io *onp_session_output(const onp_session *s, size_t i);
/* Index of the input / output named `name`, or -1. */
long onp_session_find_input(const onp_session *s, const char *name);
long onp_session_find_output(const onp_session *s, const char *name);

/* Overridable initializers: initializers that an IR >= 4 model also lists
 * as graph inputs (default values that a caller may replace).  ORT does not
 * count them as inputs; onp_session_run may feed them by name, like inputs,
 * and otherwise uses the stored values.  (IR < 4 models, e.g. old PyTorch
 * exports, list every initializer as an input; ORT treats those as
 * constants: neither inputs nor overridable.) */
size_t onp_session_initializer_count(const onp_session *s);
const onp_ort_io *onp_session_initializer(const onp_session *s, size_t i);
long onp_session_find_initializer(const onp_session *s, const char *name);

/* "float32 [N, 3, 224, 224]" ("?" for an unnamed free dim; "sequence" etc.
 * for non-tensors) into buf, truncated to n bytes; returns buf. */
char *onp_ort_io_str(const onp_ort_io *io, char *buf, size_t n);

/* --- running --------------------------------------------------------------- */

/* Run the model once.
 *
 * Inputs: `n_inputs` tensors, each fed to the graph input its `name` names;
 * a tensor whose name is NULL or "" feeds the input at its own position
 * (inputs[i] feeds input i, as input_i.pb does in ONNX test data).  Every
 * graph input must be given exactly once; an overridable initializer may be
 * given, by name, at most once.  Before ORT is called each tensor
 * is checked against its declared input: same dtype (no implicit casts),
 * same rank (unless declared rank 0), same size in every fixed dim; a
 * mismatch is ONP_ERR_USAGE like
 *   input 'x': expected float32 [1, 3, 224, 224], given float32 [2, 3, 224, 224]
 * The inputs' bytes are passed to ORT without a copy and are not modified.
 *
 * Outputs: `output_names` [n_outputs] graph outputs to fetch, in that order;
 * NULL (with n_outputs 0) fetches every graph output in graph order.
 * `outputs` must have room for n_outputs tensors (or
 * onp_session_output_count(s) when fetching all); it is written, never read
 * (what it held is overwritten, not released).  On success each is a new
 * tensor owned by the caller (onp_tensor_release), named after its output,
 * holding a copy of ORT's result: outputs do not depend on the session or
 * the library afterwards.  Outputs that are not tensors (sequences, maps,
 * an empty optional) are ONP_ERR_USAGE naming the output.
 *
 * On failure every element of `outputs` is left released (zeroed), and
 * nothing leaks.  ORT failures are ONP_ERR_RUNTIME with ORT's message kept
 * verbatim. */
int onp_session_run(onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                    const char *const *output_names, size_t n_outputs, onp_tensor *outputs,
                    onp_error *e);

/* For an error from an isolated session: "crashed" when its worker process
 * died in the call, "timeout" when it passed timeout_ms and was killed,
 * else NULL (an ordinary error, ORT's refusal included). */
const char *onp_ort_lost_worker(const onp_error *e);

#endif
