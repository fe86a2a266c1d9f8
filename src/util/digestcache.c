/*
 * digestcache.c — a file's sha256, cached by its stat identity
 * (digestcache.h): the cache file's lines, read and rewritten whole, and
 * the hashing they save.  Nothing here knows what the file is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/digestcache.h"
#include "util/fsio.h"
#include "util/sha256.h"

#define CACHE_LINES 32
#define CACHE_LINE 160 /* a line's bytes, with its newline and NUL */

/* A file's identity: a line is used only when all of it matches. */
typedef struct stat_key {
    unsigned long long dev, ino, size;
    long long mt_s, mt_ns, ct_s, ct_ns;
} stat_key;

/* The cache's folder (name NULL) or its file `name` into out[n]; -1 when
 * the cache is off (ONNXPARITY_NO_CACHE), has no home, or does not fit. */
static int cache_path(char *out, size_t n, const char *name)
{
    const char *off = getenv("ONNXPARITY_NO_CACHE");
    if (off && *off && strcmp(off, "0")) return -1;
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    const char *sep = name ? "/" : "", *file = name ? name : "";
    int w;
    if (x && x[0] == '/')
        w = snprintf(out, n, "%s/onnxparity%s%s", x, sep, file);
    else if (h && h[0] == '/')
        w = snprintf(out, n, "%s/.cache/onnxparity%s%s", h, sep, file);
    else
        return -1;
    return w > 0 && (size_t)w < n ? 0 : -1;
}

/* One cache line into k and hex; 0, or -1 when it is not one. */
static int parse_line(const char *line, stat_key *k, char hex[65])
{
    char h[65];
    int used = 0;
    if (sscanf(line, "%llu %llu %llu %lld.%lld %lld.%lld %64[0-9a-f]%n", &k->dev, &k->ino, &k->size,
               &k->mt_s, &k->mt_ns, &k->ct_s, &k->ct_ns, h, &used) != 8 ||
        strlen(h) != 64)
        return -1;
    memcpy(hex, h, 65);
    return 0;
}

/* The lines of cache file `name` (at most `max`, each with its newline)
 * into lines; the number read. */
static size_t read_lines(const char *name, char lines[][CACHE_LINE], size_t max)
{
    char path[4096];
    if (cache_path(path, sizeof path, name)) return 0;
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    size_t n = 0;
    while (n < max && fgets(lines[n], sizeof lines[n], f))
        if (strchr(lines[n], '\n')) n++;
    fclose(f);
    return n;
}

static int key_eq(const stat_key *a, const stat_key *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mt_s == b->mt_s &&
           a->mt_ns == b->mt_ns && a->ct_s == b->ct_s && a->ct_ns == b->ct_ns;
}

/* The cached digest of the file with key k into hex: 1, or 0. */
static int cache_get(const char *name, const stat_key *k, char hex[65])
{
    char lines[CACHE_LINES][CACHE_LINE];
    size_t n = read_lines(name, lines, CACHE_LINES);
    for (size_t i = 0; i < n; i++) {
        stat_key c;
        char h[65];
        if (!parse_line(lines[i], &c, h) && key_eq(&c, k)) {
            memcpy(hex, h, 65);
            return 1;
        }
    }
    return 0;
}

/* Add (k, hex) to the cache: the newest line first, the oldest dropped
 * past CACHE_LINES; written to a temporary file and renamed over the
 * cache, so a reader never sees half a file.  Not onp_write_atomic
 * (fsio.h): that is the writer of the user's outputs, with their rule
 * (refusals that are usage errors, FIFOs written in place) and an fsync
 * per write, a disk flush that a cache, which loses nothing but time
 * when lost, does not need; and its file takes the umask's mode where
 * this one stays private (mkstemp: 0600). */
static void cache_put(const char *name, const stat_key *k, const char *hex)
{
    char lines[CACHE_LINES][CACHE_LINE];
    char dir[4096], path[4096], tmp[4200];
    if (cache_path(dir, sizeof dir, NULL) || cache_path(path, sizeof path, name)) return;
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) { /* ~/.cache first, then its onnxparity/ */
        *slash = 0;
        (void)mkdir(dir, 0700);
        *slash = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return;
    size_t n = read_lines(name, lines, CACHE_LINES - 1);
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    fprintf(f, "%llu %llu %llu %lld.%09lld %lld.%09lld %s\n", k->dev, k->ino, k->size, k->mt_s,
            k->mt_ns, k->ct_s, k->ct_ns, hex);
    for (size_t i = 0; i < n; i++) {
        stat_key c;
        char h[65];
        if (!parse_line(lines[i], &c, h) && !key_eq(&c, k)) fputs(lines[i], f);
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) unlink(tmp);
}

/* The sha256 of the whole of the open file fd into hex. */
static int hash_fd(int fd, const char *path, char hex[65], onp_error *e)
{
    onp_map *m;
    if (onp_map_fd(fd, path, &m, e)) return -1;
    onp_sha256 s;
    uint8_t d[32];
    onp_sha256_init(&s);
    onp_sha256_update(&s, m->p, m->n);
    int rc = onp_sha256_final(&s, d);
    onp_map_unref(m);
    if (rc) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory hashing");
    onp_sha256_tohex(d, hex);
    return 0;
}

int onp_file_sha256(const char *path, const char *name, char hex[65], onp_error *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int rc = onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return rc;
    }
    stat_key k = {(unsigned long long)st.st_dev,  (unsigned long long)st.st_ino,
                  (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
                  (long long)st.st_mtim.tv_nsec,  (long long)st.st_ctim.tv_sec,
                  (long long)st.st_ctim.tv_nsec};
    int rc = 0;
    if (!S_ISREG(st.st_mode) || !cache_get(name, &k, hex)) {
        char h[65];
        if (!(rc = hash_fd(fd, path, h, e))) {
            memcpy(hex, h, 65);
            cache_put(name, &k, h);
        }
    }
    close(fd);
    return rc;
}
