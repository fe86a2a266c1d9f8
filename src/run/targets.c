/*
 * targets.c — check's second target (run.h onp_env_target): the ONNX
 * Runtime of the environment that captured the bundle, as parity.json's
 * "onnxruntime" record names it, judged on the same fixtures when it is not
 * the library under test; a difference between the two is the cause
 * runtime-version (causes.h, evidence `other`).  The user deploys that
 * onnxruntime, not the one the tool loaded: a check that passes on one and
 * not on the other says so.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnxparity/gate.h"
#include "onnxparity/run.h"
#include "util/fsio.h"
#include "util/sha256.h"

/* sha256 of the file at path into hex; 0, or -1 (unreadable). */
static int file_sha256(const char *path, char hex[65])
{
    onp_map *m = NULL;
    onp_error e;
    onp_error_clear(&e);
    if (onp_map_open(path, &m, &e)) return -1;
    onp_sha256_hex(m->p, m->n, hex);
    onp_map_unref(m);
    return 0;
}

static void copy_member(const cJSON *o, const char *key, char *dst, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    dst[0] = 0;
    if (cJSON_IsString(v)) snprintf(dst, n, "%s", v->valuestring);
}

/* t from parity.json's "onnxruntime" record; 1 when it names a library. */
static int read_record(const onp_bundle *b, onp_env_target *t, char sha[65])
{
    const onp_manifest *mf = onp_bundle_manifest(b);
    const cJSON *doc = mf ? onp_manifest_doc(mf) : NULL;
    const cJSON *r =
        cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "onnxruntime") : NULL;
    if (!cJSON_IsObject(r)) return 0;
    copy_member(r, "package", t->package, sizeof t->package);
    copy_member(r, "version", t->version, sizeof t->version);
    copy_member(r, "library", t->library, sizeof t->library);
    copy_member(r, "library_sha256", sha, 65);
    return t->library[0] != 0;
}

/* 1 when path (absolute, resolved) lies inside folder dir. */
static int inside(const char *path, const char *dir)
{
    char d[PATH_MAX];
    if (!dir || !realpath(dir, d)) return 0;
    size_t k = strlen(d);
    return !strncmp(path, d, k) && (path[k] == '/' || !path[k]);
}

/* Why library t->library, recorded with sha256 rec_sha, may not be
 * loaded, or NULL: it may.  A bundle may come from anywhere and loading a
 * library runs its code, so the record must name an ONNX Runtime library
 * by an absolute path outside the bundle whose sha256 the capture
 * recorded and the file still has. */
static const char *unfollowable(const onp_bundle *b, const char *library, const char *rec_sha,
                                char *buf, size_t n)
{
    struct stat st;
    char there[65];
    const char *base = strrchr(library, '/');
    char real[PATH_MAX];
    if (library[0] != '/' || !base || strncmp(base + 1, "libonnxruntime.so", 17)) {
        snprintf(buf, n, "%.400s is not an absolute path to a libonnxruntime.so", library);
        return buf;
    }
    if (stat(library, &st) || !S_ISREG(st.st_mode) || !realpath(library, real)) {
        snprintf(buf, n, "%.400s is not on this machine", library);
        return buf;
    }
    if (inside(real, onp_bundle_dir(b))) return "the recorded library is inside the bundle";
    if (strlen(rec_sha) != 64) return "parity.json records no sha256 of the library";
    if (file_sha256(library, there)) {
        snprintf(buf, n, "cannot read %.400s", library);
        return buf;
    }
    if (strcmp(rec_sha, there)) {
        snprintf(buf, n, "%.400s changed since the capture (sha256 %.12s, recorded %.12s)", library,
                 there, rec_sha);
        return buf;
    }
    return NULL;
}

/* Why the recorded library is not judged as check's second target, or
 * NULL: it is (followable, and not the library under test). */
static const char *skip_reason(onp_check *c, const onp_run_args *a, const char *rec_sha, char *buf,
                               size_t n)
{
    onp_env_target *t = &c->env;
    char here[65], there[65];
    if (a->run.no_env_target) return "--no-env-target";
    if (a->run.shard_n) return "a shard checks one target";
    const char *why = unfollowable(c->bundle, t->library, rec_sha, buf, n);
    if (why) return why;
    if (file_sha256(onp_ort_lib_path(c->ort), here) || file_sha256(t->library, there)) {
        snprintf(buf, n, "cannot read %.400s", t->library);
        return buf;
    }
    return strcmp(here, there) ? NULL : "it is the library under test";
}

int onp_gate_env_library(const onp_bundle *b, char *lib, size_t n, char *why, size_t wn)
{
    onp_env_target t;
    char rec_sha[65] = "";
    memset(&t, 0, sizeof t);
    lib[0] = '\0';
    if (!read_record(b, &t, rec_sha)) {
        snprintf(why, wn,
                 "parity.json records no onnxruntime library of the capturing "
                 "environment");
        return -1;
    }
    const char *no = unfollowable(b, t.library, rec_sha, why, wn);
    if (no) {
        if (no != why) snprintf(why, wn, "%s", no);
        return -1;
    }
    snprintf(lib, n, "%s", t.library);
    return 0;
}

int onp_check_env_target(onp_check *c, onp_run_args *a, onp_error *e)
{
    onp_env_target *t = &c->env;
    char rec_sha[65] = "", buf[512];
    if (!c->ran || !read_record(c->bundle, t, rec_sha)) return 0;
    t->recorded = 1;
    c->run.env_target = t;
    snprintf(t->this_version, sizeof t->this_version, "%s", onp_ort_version(c->ort));
    const char *why = skip_reason(c, a, rec_sha, buf, sizeof buf);
    if (why) {
        snprintf(t->why_not, sizeof t->why_not, "%s", why);
        return 0;
    }
    onp_run_opts o = a->run;
    o.ort_lib = t->library;
    o.save_repro = NULL;
    o.progress = NULL;
    int upgraded = 0;
    onp_error oe;
    onp_error_clear(&oe);
    if (onp_run_session_open(c->bundle, &o, &t->ort, &t->session, &upgraded, &oe)) {
        onp_error_format(&oe, t->why_not, sizeof t->why_not);
        return 0;
    }
    snprintf(t->version, sizeof t->version, "%s", onp_ort_version(t->ort));
    if (onp_run(c->bundle, t->ort, t->session, &o, &t->run, e)) return -1;
    t->checked = 1;
    snprintf(t->label, sizeof t->label, "the capturing environment's %s %s",
             t->package[0] ? t->package : "onnxruntime", t->version);
    t->other = (onp_other_target){.what = t->label,
                                  .version = t->version,
                                  .library = t->library,
                                  .this_version = t->this_version,
                                  .fixtures = t->run.fix,
                                  .n_fixtures = t->run.n_fix,
                                  .bisect = t->run.bisect};
    c->run.other = &t->other;
    if (onp_run_causes(&a->run, &c->run, e)) return -1;
    /* either target failing fails the check */
    if (t->run.verdict > c->run.verdict) c->run.verdict = t->run.verdict;
    return 0;
}
