/*
 * bundle.c — onp_bundle (run.h): what a run is about, read once.  The
 * fixtures are scanned, the model mapped, parity.json parsed once
 * (onp_manifest) and the noise book, the adequacy and the traced fixture
 * derived from that one document; every client of the run reads them here.
 *
 * The model's sha256 is hashed on a second thread while ONNX Runtime's
 * worker builds its session.  The worker is forked, and a process must not
 * fork while another of its threads may hold a lock (under ASan the child
 * can deadlock in the allocator): so the thread is started by an atfork
 * handler right after a fork, and every later fork first waits for every
 * running hash.  The table of hash jobs is process-wide (fork handlers
 * are), guarded by one mutex held across the fork.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnxparity/run.h"

typedef enum { HASH_WANTED = 0, HASH_RUNNING, HASH_DONE } hash_state;

struct onp_bundle {
    char *dir; /* the bundle folder, or NULL */
    char *model_path;
    char **data; /* [n_data] fixture folders */
    size_t n_data;
    onp_model *model;
    onp_testdata td;
    onp_manifest *manifest; /* or NULL */
    onp_noisebook *noise;
    onp_adequacy *adequacy; /* or NULL */
    int traced;
    /* the hash: state and thread under g_hash.mu; hex written by the thread */
    hash_state hstate;
    pthread_t hthread;
    char hex[65];
    onp_bundle *hnext; /* in g_hash.jobs while not DONE */
};

static struct {
    pthread_mutex_t mu;
    onp_bundle *jobs;
} g_hash = {PTHREAD_MUTEX_INITIALIZER, NULL};

static void *hash_thread(void *p)
{
    onp_bundle *b = p;
    onp_model_sha256(b->model, b->hex);
    return NULL;
}

/* Remove b from the job list (mu held). */
static void hash_unlink(onp_bundle *b)
{
    for (onp_bundle **p = &g_hash.jobs; *p; p = &(*p)->hnext)
        if (*p == b) {
            *p = b->hnext;
            break;
        }
    b->hnext = NULL;
}

/* Wait for b's hash, or hash now (mu held). */
static void hash_settle(onp_bundle *b)
{
    if (b->hstate == HASH_RUNNING) pthread_join(b->hthread, NULL);
    if (b->hstate == HASH_WANTED) hash_thread(b);
    b->hstate = HASH_DONE;
    hash_unlink(b);
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_hash.mu);
    for (onp_bundle *b = g_hash.jobs; b; b = b->hnext)
        if (b->hstate == HASH_RUNNING) {
            pthread_join(b->hthread, NULL);
            b->hstate = HASH_DONE;
        }
    onp_bundle **p = &g_hash.jobs; /* the finished ones leave the list */
    while (*p)
        if ((*p)->hstate == HASH_DONE)
            *p = (*p)->hnext;
        else
            p = &(*p)->hnext;
}

static void fork_parent(void)
{
    for (onp_bundle *b = g_hash.jobs; b; b = b->hnext)
        if (b->hstate == HASH_WANTED && pthread_create(&b->hthread, NULL, hash_thread, b) == 0)
            b->hstate = HASH_RUNNING;
    pthread_mutex_unlock(&g_hash.mu);
}

static void fork_child(void)
{
    pthread_mutex_unlock(&g_hash.mu);
}

static void hash_once(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static int nomem(onp_error *e)
{
    return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
}

/* The strings of spec into b. */
static int copy_spec(onp_bundle *b, const onp_bundle_spec *spec, onp_error *e)
{
    size_t n = spec->bundle ? 1 : spec->n_data;
    b->data = calloc(n ? n : 1, sizeof *b->data);
    if (!b->data) return nomem(e);
    if (spec->bundle) {
        size_t len = strlen(spec->bundle) + sizeof "/model.onnx";
        b->dir = strdup(spec->bundle);
        b->model_path = malloc(len);
        if (!b->dir || !b->model_path) return nomem(e);
        snprintf(b->model_path, len, "%s/model.onnx", spec->bundle);
        b->data[0] = strdup(spec->bundle);
        b->n_data = 1;
        return b->data[0] ? 0 : nomem(e);
    }
    if (!spec->model || !spec->n_data)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "a bundle, or a model and at least one fixture folder");
    if (!(b->model_path = strdup(spec->model))) return nomem(e);
    for (; b->n_data < n; b->n_data++)
        if (!(b->data[b->n_data] = strdup(spec->data[b->n_data]))) return nomem(e);
    return 0;
}

/* parity.json, when the bundle has one, and what derives from it. */
static int read_manifest(onp_bundle *b, onp_error *e)
{
    b->traced = -1;
    if (b->dir) {
        struct stat st;
        size_t len = strlen(b->dir) + sizeof "/parity.json";
        char *path = malloc(len);
        if (!path) return nomem(e);
        snprintf(path, len, "%s/parity.json", b->dir);
        int rc = stat(path, &st) == 0 ? onp_manifest_open(path, &b->manifest, e) : 0;
        free(path);
        if (rc) return -1;
    }
    if (onp_noisebook_from_manifest(b->manifest, &b->noise, e) ||
        onp_adequacy_from_manifest(b->manifest, &b->adequacy, e))
        return -1;
    b->traced = onp_manifest_traced_fixture(b->manifest);
    return 0;
}

int onp_bundle_open(const onp_bundle_spec *spec, onp_bundle **out, onp_error *e)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    *out = NULL;
    onp_bundle *b = calloc(1, sizeof *b);
    if (!b) return nomem(e);
    b->hstate = HASH_DONE;
    /* fixtures first: a target without them is bad input before the model
     * or ORT is touched */
    if (copy_spec(b, spec, e) ||
        onp_testdata_scan_dirs((const char *const *)b->data, b->n_data, &b->td, e) ||
        onp_testdata_require(&b->td, b->data[0], e) ||
        onp_model_open(b->model_path, &b->model, e) || read_manifest(b, e)) {
        onp_bundle_close(b);
        return -1;
    }
    pthread_once(&once, hash_once);
    pthread_mutex_lock(&g_hash.mu);
    b->hstate = HASH_WANTED;
    b->hnext = g_hash.jobs;
    g_hash.jobs = b;
    pthread_mutex_unlock(&g_hash.mu);
    *out = b;
    return 0;
}

const char *onp_bundle_dir(const onp_bundle *b)
{
    return b->dir;
}

const char *onp_bundle_model_path(const onp_bundle *b)
{
    return b->model_path;
}

const char *const *onp_bundle_data(const onp_bundle *b, size_t *n)
{
    *n = b->n_data;
    return (const char *const *)b->data;
}

onp_bundle_spec onp_bundle_where(const onp_bundle *b)
{
    onp_bundle_spec w = {b->dir, b->model_path, (const char *const *)b->data, b->n_data};
    return w;
}

const onp_model *onp_bundle_model(const onp_bundle *b)
{
    return b->model;
}

const onp_testdata *onp_bundle_fixtures(const onp_bundle *b)
{
    return &b->td;
}

const onp_manifest *onp_bundle_manifest(const onp_bundle *b)
{
    return b->manifest;
}

const onp_noisebook *onp_bundle_noise(const onp_bundle *b)
{
    return b->noise;
}

const onp_adequacy *onp_bundle_adequacy(const onp_bundle *b)
{
    return b->adequacy;
}

int onp_bundle_traced_fixture(const onp_bundle *b)
{
    return b->traced;
}

const char *onp_bundle_sha256(onp_bundle *b)
{
    pthread_mutex_lock(&g_hash.mu);
    if (b->hstate != HASH_DONE) hash_settle(b);
    pthread_mutex_unlock(&g_hash.mu);
    return b->hex;
}

void onp_bundle_close(onp_bundle *b)
{
    if (!b) return;
    if (b->model) { /* no thread may read the model after this */
        pthread_mutex_lock(&g_hash.mu);
        if (b->hstate == HASH_RUNNING) pthread_join(b->hthread, NULL);
        b->hstate = HASH_DONE;
        hash_unlink(b);
        pthread_mutex_unlock(&g_hash.mu);
    }
    onp_noisebook_free(b->noise);
    onp_adequacy_free(b->adequacy);
    onp_manifest_free(b->manifest);
    onp_testdata_free(&b->td);
    onp_model_close(b->model);
    for (size_t i = 0; b->data && i < b->n_data; i++) free(b->data[i]);
    free(b->data);
    free(b->model_path);
    free(b->dir);
    free(b);
}
