/*
 * ort.c — loading ONNX Runtime (include/onnxparity/ort.h): finding and
 * dlopen'ing the library, choosing its C API version, creating the OrtEnv
 * with a logger that keeps ORT's messages off stderr, listing providers, and
 * turning OrtStatus into onp_error.  Nothing here runs a model.
 *
 * The library is never dlclose'd once it has handed out its API: ORT starts
 * threads and registers static state, and unloading it is not reliably safe.
 * Releasing the last handle releases the OrtEnv, which is what owns ORT's
 * resources.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ort/ort_internal.h"
#include "util/digestcache.h"

#define ORT_SONAME "libonnxruntime.so.1"
#define ORT_REL_LIB "third_party/onnxruntime/lib/" ORT_SONAME

// --- ORT's log ---------------------------------------------------------------

/* A process-wide ring of the latest LOG_KEEP messages.  The logger is handed
 * to ORT with no parameter, so it never points at memory a handle frees: ORT
 * shares one OrtEnv (and the first logger given) between every creator. */
#define LOG_KEEP 32
#define LOG_LINE 400

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_ring[LOG_KEEP][LOG_LINE];
static size_t log_first, log_kept, log_total;
static int log_echo = ORT_LOGGING_LEVEL_FATAL + 1; /* severities >= this go to stderr */

static const char *const severity_names[] = {"verbose", "info", "warning", "error", "fatal"};

/* The next slot of the ring, dropping the oldest line when it is full.
 * Called with log_mu held. */
static char *ring_slot(void)
{
    size_t slot = (log_first + log_kept) % LOG_KEEP;
    if (log_kept == LOG_KEEP)
        log_first = (log_first + 1) % LOG_KEEP;
    else
        log_kept++;
    log_total++;
    return log_ring[slot];
}

static void ORT_API_CALL log_fn(void *param, OrtLoggingLevel severity, const char *category,
                                const char *logid, const char *code_location, const char *message)
{
    (void)param;
    (void)category;
    (void)logid;
    (void)code_location;
    const char *sev = (unsigned)severity < 5 ? severity_names[severity] : "log";
    pthread_mutex_lock(&log_mu);
    char *line = ring_slot();
    snprintf(line, LOG_LINE, "%s: %s", sev, message ? message : "");
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    int echo = (int)severity >= log_echo;
    if (echo) fprintf(stderr, "onnxruntime %s\n", line);
    pthread_mutex_unlock(&log_mu);
}

/* A fork while another thread holds log_mu would leave the child's copy
 * locked forever (and the worker takes it first thing): hold it across
 * every fork, release it on both sides. */
static void log_fork_prepare(void)
{
    pthread_mutex_lock(&log_mu);
}

static void log_fork_done(void)
{
    pthread_mutex_unlock(&log_mu);
}

/* The process-wide set-up of the first open: the log lock's fork handlers,
 * and ONNX Runtime's telemetry off unless the user asked otherwise (the npm
 * build, third_party/, otherwise writes a session file, /tmp/.ses or
 * ":memory:.ses" in the working folder, and an empty /tmp/mat-debug-PID.log
 * per process, worker processes included: they inherit the environment).
 * Before any library loads, and once: setenv is not safe beside threads
 * reading the environment. */
static void process_once(void)
{
    pthread_atfork(log_fork_prepare, log_fork_done, log_fork_done);
    setenv("ORT_DISABLE_TELEMETRY", "1", 0);
}

size_t onp_ort_log_take(char *buf, size_t n)
{
    pthread_mutex_lock(&log_mu);
    size_t k = 0, total = log_total;
    if (n) buf[0] = '\0';
    for (size_t i = 0; i < log_kept && n && k < n - 1; i++) {
        int w = snprintf(buf + k, n - k, "%s\n", log_ring[(log_first + i) % LOG_KEEP]);
        if (w < 0) break;
        k += (size_t)w < n - k ? (size_t)w : n - k - 1;
    }
    log_first = log_kept = log_total = 0;
    pthread_mutex_unlock(&log_mu);
    return total;
}

/* The severity ORT should log at: warning, or what ONNXPARITY_ORT_LOG asks
 * for (which also turns on the copy to stderr). */
static OrtLoggingLevel log_level_from_env(void)
{
    const char *v = getenv("ONNXPARITY_ORT_LOG");
    if (!v || !*v) return ORT_LOGGING_LEVEL_WARNING;
    for (int i = 0; i < 5; i++) {
        if (!strcasecmp(v, severity_names[i])) {
            pthread_mutex_lock(&log_mu);
            log_echo = i;
            pthread_mutex_unlock(&log_mu);
            return (OrtLoggingLevel)(i < ORT_LOGGING_LEVEL_WARNING ? i : ORT_LOGGING_LEVEL_WARNING);
        }
    }
    return ORT_LOGGING_LEVEL_WARNING;
}

// --- statuses ----------------------------------------------------------------

static const char *ort_code_name(int code)
{
    static const char *const names[] = {
        "ORT_OK",
        "ORT_FAIL",
        "ORT_INVALID_ARGUMENT",
        "ORT_NO_SUCHFILE",
        "ORT_NO_MODEL",
        "ORT_ENGINE_ERROR",
        "ORT_RUNTIME_EXCEPTION",
        "ORT_INVALID_PROTOBUF",
        "ORT_MODEL_LOADED",
        "ORT_NOT_IMPLEMENTED",
        "ORT_INVALID_GRAPH",
        "ORT_EP_FAIL",
        "ORT_MODEL_LOAD_CANCELED",
        "ORT_MODEL_REQUIRES_COMPILATION",
        "ORT_NOT_FOUND",
        "ORT_DEVICE_RESET",
    };
    if (code >= 0 && (size_t)code < sizeof names / sizeof names[0]) return names[code];
    return "ORT_ERROR";
}

/* msg into dst[n] (n > 128).  One that does not fit keeps its head (which
 * call failed, on which file) and its tail (where ORT and its providers put
 * the reason: OpenVINO's compiler error ends a long message) around
 * " ... (K bytes cut) ... ", both cut between UTF-8 characters. */
static void fit_message(char *dst, size_t n, const char *msg)
{
    size_t len = strlen(msg);
    if (len < n) {
        memcpy(dst, msg, len + 1);
        return;
    }
    /* the mark is widest when it states len itself: room for that */
    char mark[64];
    size_t w = (size_t)snprintf(mark, sizeof mark, " ... (%zu bytes cut) ... ", len);
    size_t h = (n - 1) / 3, t = len - (n - 1 - h - w);
    while (h > 0 && ((unsigned char)msg[h] & 0xC0) == 0x80) h--;
    while (t < len && ((unsigned char)msg[t] & 0xC0) == 0x80) t++;
    snprintf(mark, sizeof mark, " ... (%zu bytes cut) ... ", t - h);
    snprintf(dst, n, "%.*s%s%s", (int)h, msg, mark, msg + t);
}

int onp_ort_status(const onp_ort *ort, OrtStatus *st, const char *call, const char *file,
                   onp_error *e)
{
    if (!st) return 0;
    char field[128];
    snprintf(field, sizeof field, "%s [%s]", call, ort_code_name((int)ort->api->GetErrorCode(st)));
    const char *msg = ort->api->GetErrorMessage(st);
    char fit[sizeof e->msg];
    fit_message(fit, sizeof fit, msg ? msg : "(no message)");
    onp_error_set(e, ONP_ERR_RUNTIME, file, field, -1, "%s", fit);
    ort->api->ReleaseStatus(st);
    return -1;
}

int onp_ort_split_kv(const char *s, const char *what, char **key, const char **value, onp_error *e)
{
    *key = NULL;
    *value = NULL;
    const char *eq = s ? strchr(s, '=') : NULL;
    if (!eq || eq == s)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "%s '%s' is not KEY=VALUE", what,
                             s ? s : "(null)");
    *key = strndup(s, (size_t)(eq - s));
    if (!*key) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    *value = eq + 1;
    return 0;
}

// --- finding the library -----------------------------------------------------

/* Copy a NUL-terminated string into dst[n], truncating. */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t k = strlen(src);
    if (k >= n) k = n - 1;
    memcpy(dst, src, k);
    dst[k] = '\0';
}

/* Append "; path (why)" to the list of paths tried. */
static void tried_add(char *tried, size_t n, const char *path, const char *why)
{
    size_t k = strlen(tried);
    if (k < n) snprintf(tried + k, n - k, "%s%s (%s)", k ? "; " : "", path, why);
}

/* dlopen `path`; on failure note why in `tried`.  Files named with a '/'
 * are checked for existence first so the list says "absent" plainly. */
static void *try_dlopen(const char *path, char *tried, size_t n)
{
    if (strchr(path, '/') && access(path, F_OK) != 0) {
        tried_add(tried, n, path, strerror(errno));
        return NULL;
    }
    dlerror();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        tried_add(tried, n, path, why ? why : "dlopen failed");
    }
    return dl;
}

/* The directory holding the running executable, or "" when unknown. */
static void exe_dir(char *buf, size_t n)
{
    buf[0] = '\0';
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    if (k <= 0) {
        buf[0] = '\0';
        return;
    }
    buf[k] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        buf[0] = '\0';
}

/* The directory holding the file this code was loaded from (the shared
 * libonnxparity.so.N in a binding's process; the tool itself when linked
 * statically), or "". */
static void self_dir(char *buf, size_t n)
{
    Dl_info info;
    buf[0] = '\0';
    if (!dladdr((void *)self_dir, &info) || !info.dli_fname || info.dli_fname[0] != '/') return;
    snprintf(buf, n, "%s", info.dli_fname);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
}

/* Load the library following the search order of onp_ort_open.  On success
 * returns the handle and the name passed to dlopen in `used`. */
static void *load_library(const char *lib_path, char *used, size_t used_n, onp_error *e)
{
    char tried[2048] = "";
    void *dl = NULL;
    const char *envp = getenv("ONNXPARITY_ORT_LIB");

    if (lib_path && *lib_path) {
        dl = try_dlopen(lib_path, tried, sizeof tried);
        if (dl)
            copy_str(used, used_n, lib_path);
        else
            onp_error_set(e, ONP_ERR_IO, lib_path, NULL, -1,
                          "cannot load ONNX Runtime from the path given: %s", tried);
        return dl;
    }
    if (envp && *envp) {
        dl = try_dlopen(envp, tried, sizeof tried);
        if (dl)
            copy_str(used, used_n, envp);
        else
            onp_error_set(e, ONP_ERR_IO, envp, NULL, -1,
                          "cannot load ONNX Runtime named by ONNXPARITY_ORT_LIB: %s", tried);
        return dl;
    }

    char dir[PATH_MAX];
    char cand[8][PATH_MAX + 64];
    int nc = 0;
#ifdef ONP_ORT_HOME /* the build's ORT_HOME=DIR (an official release layout) */
    snprintf(cand[nc++], sizeof cand[0], "%s/lib/%s", ONP_ORT_HOME, ORT_SONAME);
    snprintf(cand[nc++], sizeof cand[0], "%s/lib/libonnxruntime.so", ONP_ORT_HOME);
#endif
    exe_dir(dir, sizeof dir);
    if (dir[0]) {
        /* `make install` and the wheel: PREFIX/bin/onnxparity beside
         * PREFIX/lib/onnxparity/libonnxruntime.so.1 */
        snprintf(cand[nc++], sizeof cand[0], "%s/../lib/onnxparity/%s", dir, ORT_SONAME);
        snprintf(cand[nc++], sizeof cand[0], "%s/../%s", dir, ORT_REL_LIB);
        snprintf(cand[nc++], sizeof cand[0], "%s/../../%s", dir, ORT_REL_LIB);
    }
    self_dir(dir, sizeof dir);
    if (dir[0]) {
        /* the shared library in a binding's process: LIBDIR/onnxparity/
         * beside LIBDIR/libonnxparity.so.N (make install, the wheel), or
         * the source tree's build/ beside third_party/ */
        snprintf(cand[nc++], sizeof cand[0], "%s/onnxparity/%s", dir, ORT_SONAME);
        snprintf(cand[nc++], sizeof cand[0], "%s/../%s", dir, ORT_REL_LIB);
    }
    snprintf(cand[nc++], sizeof cand[0], "./%s", ORT_REL_LIB);
    for (int i = 0; i < nc && !dl; i++) {
        dl = try_dlopen(cand[i], tried, sizeof tried);
        if (dl) copy_str(used, used_n, cand[i]);
    }
    if (!dl) {
        dl = try_dlopen(ORT_SONAME, tried, sizeof tried);
        if (dl) copy_str(used, used_n, ORT_SONAME);
    }
    if (!dl)
        onp_error_set(e, ONP_ERR_IO, NULL, NULL, -1,
                      "cannot load ONNX Runtime (pass --ort-lib PATH or set ONNXPARITY_ORT_LIB); "
                      "tried: %s",
                      tried);
    return dl;
}

/* The minor version of a "1.MINOR.PATCH" version string, or 0. */
static uint32_t version_minor(const char *v)
{
    if (!v || v[0] != '1' || v[1] != '.') return 0;
    char *end;
    unsigned long m = strtoul(v + 2, &end, 10);
    return end != v + 2 && m < 1000 ? (uint32_t)m : 0;
}

// --- opening -----------------------------------------------------------------

static void ort_free(onp_ort *ort)
{
    if (!ort) return;
    if (ort->api) {
        if (ort->cpu_mem) ort->api->ReleaseMemoryInfo(ort->cpu_mem);
        if (ort->env) ort->api->ReleaseEnv(ort->env);
    }
    for (size_t i = 0; i < ort->n_providers; i++) free(ort->providers[i]);
    free(ort->providers);
    free(ort->path);
    free(ort->version);
    free(ort->build_info);
    pthread_mutex_destroy(&ort->env_mu);
    pthread_mutex_destroy(&ort->sha_mu);
    free(ort);
}

static int nomem(onp_error *e)
{
    return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
}

/* Copy GetAvailableProviders into the handle. */
static int read_providers(onp_ort *ort, onp_error *e)
{
    char **list = NULL;
    int n = 0;
    if (onp_ort_status(ort, ort->api->GetAvailableProviders(&list, &n), "GetAvailableProviders",
                       NULL, e))
        return -1;
    int rc = 0;
    if (n > 0) {
        ort->providers = calloc((size_t)n, sizeof *ort->providers);
        if (!ort->providers) rc = nomem(e);
        for (int i = 0; !rc && i < n; i++) {
            ort->providers[i] = strdup(list[i] ? list[i] : "");
            if (!ort->providers[i])
                rc = nomem(e);
            else
                ort->n_providers++;
        }
    }
    OrtStatus *st = ort->api->ReleaseAvailableProviders(list, n);
    if (st) ort->api->ReleaseStatus(st);
    return rc;
}

int onp_ort_open_api(const char *lib_path, uint32_t max_api, onp_ort **out, onp_error *e)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, process_once);
    *out = NULL;
    if (max_api == 0 || max_api > ORT_API_VERSION) max_api = ORT_API_VERSION;
    if (max_api < ONP_ORT_MIN_API)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "ONNX Runtime C API version %u is below the minimum onnxparity "
                             "uses (%d)",
                             (unsigned)max_api, ONP_ORT_MIN_API);

    char used[PATH_MAX + 64];
    void *dl = load_library(lib_path, used, sizeof used, e);
    if (!dl) return -1;

    dlerror();
    void *sym = dlsym(dl, "OrtGetApiBase");
    if (!sym) {
        dlclose(dl); /* not ORT: nothing of ORT's ran */
        return onp_error_set(e, ONP_ERR_IO, used, NULL, -1,
                             "not an ONNX Runtime library (it has no OrtGetApiBase)");
    }
    const OrtApiBase *(*get_base)(void);
    memcpy(&get_base, &sym, sizeof get_base); /* POSIX: dlsym's object pointer is the function */
    const OrtApiBase *base = get_base();
    if (!base || !base->GetApi || !base->GetVersionString)
        return onp_error_set(e, ONP_ERR_IO, used, NULL, -1,
                             "OrtGetApiBase returned nothing usable");

    onp_ort *ort = calloc(1, sizeof *ort);
    if (!ort) return nomem(e);
    atomic_init(&ort->refs, 1);
    pthread_mutex_init(&ort->env_mu, NULL);
    pthread_mutex_init(&ort->sha_mu, NULL);
    ort->dl = dl;

    char real[PATH_MAX];
    Dl_info info;
    const char *where = used;
    if (dladdr(sym, &info) && info.dli_fname && info.dli_fname[0]) where = info.dli_fname;
    ort->path = strdup(realpath(where, real) ? real : where);
    const char *ver = base->GetVersionString();
    ort->version = strdup(ver ? ver : "");
    if (!ort->path || !ort->version) {
        ort_free(ort);
        return nomem(e);
    }

    /* ORT's C API version is its minor version.  Asking an older library
     * for a newer API makes it print to stderr, so start from what its
     * version string says it has. */
    uint32_t want = max_api, minor = version_minor(ort->version);
    if (minor && minor < want) want = minor;
    for (uint32_t v = want; v >= ONP_ORT_MIN_API && !ort->api; v--) {
        ort->api = base->GetApi(v);
        if (ort->api) ort->api_version = v;
    }
    if (!ort->api) {
        if (want < ONP_ORT_MIN_API)
            onp_error_set(e, ONP_ERR_RUNTIME, ort->path, NULL, -1,
                          "ONNX Runtime %s is older than 1.%d, the oldest onnxparity uses",
                          ort->version, ONP_ORT_MIN_API);
        else
            onp_error_set(e, ONP_ERR_RUNTIME, ort->path, NULL, -1,
                          "ONNX Runtime %s offers no C API version in %d..%u", ort->version,
                          ONP_ORT_MIN_API, (unsigned)want);
        ort_free(ort);
        return -1;
    }

    const OrtApi *api = ort->api;
    if (onp_ort_status(ort, api->GetAllocatorWithDefaultOptions(&ort->alloc),
                       "GetAllocatorWithDefaultOptions", ort->path, e) ||
        onp_ort_status(
            ort, api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &ort->cpu_mem),
            "CreateCpuMemoryInfo", ort->path, e) ||
        read_providers(ort, e)) {
        onp_error_set_file(e, ort->path);
        ort_free(ort);
        return -1;
    }
    const char *bi = api->GetBuildInfoString ? api->GetBuildInfoString() : NULL;
    ort->build_info = strdup(bi ? bi : "");
    if (!ort->build_info) {
        ort_free(ort);
        return nomem(e);
    }
    for (char *p = ort->build_info; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    *out = ort;
    return 0;
}

int onp_ort_open(const char *lib_path, onp_ort **out, onp_error *e)
{
    return onp_ort_open_api(lib_path, 0, out, e);
}

/* The OrtEnv is made on first need, not by onp_ort_open: creating it starts
 * a thread inside ORT, and a process that forks worker processes
 * (ort_worker.c) must not hold ORT threads when it forks.  A parent that
 * only runs isolated sessions never creates one; each worker creates its
 * own after the fork. */
int onp_ort_env_ready(onp_ort *ort, onp_error *e)
{
    pthread_mutex_lock(&ort->env_mu);
    int rc = 0;
    if (!ort->env) {
        OrtLoggingLevel level = log_level_from_env();
        rc = onp_ort_status(
            ort, ort->api->CreateEnvWithCustomLogger(log_fn, NULL, level, "onnxparity", &ort->env),
            "CreateEnvWithCustomLogger", ort->path, e);
    }
    pthread_mutex_unlock(&ort->env_mu);
    return rc;
}

void onp_ort_log_add(const char *line)
{
    pthread_mutex_lock(&log_mu);
    snprintf(ring_slot(), LOG_LINE, "%s", line);
    pthread_mutex_unlock(&log_mu);
}

void onp_ort_ref(onp_ort *ort)
{
    atomic_fetch_add(&ort->refs, 1);
}

void onp_ort_unref(onp_ort *ort)
{
    if (ort && atomic_fetch_sub(&ort->refs, 1) == 1) ort_free(ort);
}

void onp_ort_close(onp_ort *ort)
{
    onp_ort_unref(ort);
}

// --- facts -------------------------------------------------------------------

const char *onp_ort_version(const onp_ort *ort)
{
    return ort->version;
}

// --- the library's sha256 ------------------------------------------------------------

/* Hashed once per handle, and once per file across processes through the
 * digest cache (util/digestcache.h, the cache file "ort-sha256").  The
 * digest is of the file at ort->path, the file this handle loaded; it is
 * found at the first ask or while an isolated session's worker creates its
 * session (ort_worker.c), when the parent would otherwise wait idle. */
int onp_ort_lib_sha256(onp_ort *ort, char hex[65], onp_error *e)
{
    pthread_mutex_lock(&ort->sha_mu);
    int rc = 0;
    if (!ort->lib_sha256[0]) rc = onp_file_sha256(ort->path, "ort-sha256", ort->lib_sha256, e);
    if (!rc) memcpy(hex, ort->lib_sha256, 65);
    pthread_mutex_unlock(&ort->sha_mu);
    return rc;
}

const char *onp_ort_lib_path(const onp_ort *ort)
{
    return ort->path;
}

uint32_t onp_ort_api_version(const onp_ort *ort)
{
    return ort->api_version;
}

const char *onp_ort_build_info(const onp_ort *ort)
{
    return ort->build_info;
}

size_t onp_ort_provider_count(const onp_ort *ort)
{
    return ort->n_providers;
}

const char *onp_ort_provider(const onp_ort *ort, size_t i)
{
    return i < ort->n_providers ? ort->providers[i] : NULL;
}

int onp_ort_has_provider(const onp_ort *ort, const char *name)
{
    const char *full = onp_ort_ep_canonical(ort, name);
    if (!full) return 0;
    for (size_t i = 0; i < ort->n_providers; i++)
        if (!strcmp(ort->providers[i], full)) return 1;
    return 0;
}

char *onp_ort_provider_list(const onp_ort *ort, char *buf, size_t n)
{
    size_t k = 0;
    if (!n) return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < ort->n_providers && k < n; i++) {
        int w = snprintf(buf + k, n - k, "%s%s", i ? ", " : "", ort->providers[i]);
        if (w < 0) break;
        k += (size_t)w;
    }
    if (!ort->n_providers) snprintf(buf, n, "(none)");
    return buf;
}
