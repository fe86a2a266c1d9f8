/*
 * fsio.c — memory maps and atomic writes (fsio.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsio.h"

int onp_map_fd(int fd, const char *path, onp_map **out, onp_error *e)
{
    struct stat st;
    *out = NULL;
    if (fstat(fd, &st) != 0)
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot stat: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1, "is a folder, not a file");
    if (!S_ISREG(st.st_mode))
        return onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1, "is not a regular file");
    onp_map *m = calloc(1, sizeof *m);
    if (!m) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    m->refs = 1;
    if (st.st_size == 0) {
        static const uint8_t empty[1];
        m->p = empty;
        m->n = 0;
        *out = m;
        return 0;
    }
    if ((uint64_t)st.st_size > SIZE_MAX) {
        free(m);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "file too large to map");
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        free(m);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot map: %s", strerror(errno));
    }
    m->p = p;
    m->n = (size_t)st.st_size;
    m->mapped = 1;
    *out = m;
    return 0;
}

int onp_map_open(const char *path, onp_map **out, onp_error *e)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
     * onp_map_fd then refuses anything but a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open: %s", strerror(errno));
    int rc = onp_map_fd(fd, path, out, e);
    close(fd);
    return rc;
}

void onp_map_ref(onp_map *m)
{
    if (m) m->refs++;
}

void onp_map_unref(onp_map *m)
{
    if (!m || --m->refs > 0) return;
    if (m->mapped) munmap((void *)m->p, m->n);
    free(m);
}

void onp_map_unref_void(void *m)
{
    onp_map_unref(m);
}

int onp_write_atomic(const char *path, const onp_piece *pieces, size_t n, onp_error *e)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot create: %s", strerror(errno));
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = pieces[i].p;
        size_t left = pieces[i].n;
        while (left) {
            ssize_t w = write(fd, p, left > (1u << 30) ? (1u << 30) : left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot write: %s",
                              w < 0 ? strerror(errno) : "short write");
                goto fail;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    if (fchmod(fd, 0644) != 0 || close(fd) != 0) {
        fd = -1;
        onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot finish: %s", strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot rename into place: %s",
                      strerror(errno));
        goto fail;
    }
    free(tmp);
    return 0;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
    free(tmp);
    return -1;
}

int onp_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
