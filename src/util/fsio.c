/*
 * fsio.c — memory maps and atomic writes (fsio.h), and the output-path
 * rule (include/onnxparity/outpath.h): every map notes the file as read, and
 * every write checks its path against what was read before anything is
 * created.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "onnxparity/buf.h"
#include "onnxparity/outpath.h"
#include "util/fsio.h"

static void seen_add(dev_t dev, ino_t ino, int tree, const char *path);

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
    seen_add(st.st_dev, st.st_ino, 0, path);
    size_t plen = path ? strlen(path) : 0;
    onp_map *m = calloc(1, sizeof *m + plen + 1);
    if (!m) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    m->refs = 1;
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    if (plen) memcpy(m->path, path, plen + 1);
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

int onp_map_reopen(const onp_map *m)
{
    if (!m || !m->mapped || !m->path[0]) return -1;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != m->dev ||
                    st.st_ino != m->ino || (uint64_t)st.st_size < m->n)) {
        close(fd);
        fd = -1;
    }
    return fd;
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

void onp_map_unref_view(void *m)
{
    onp_map_unref(m);
}

// --- what the process reads: no output may replace it ----------------------------

/* One file (or, with tree set, one folder and everything below it) that
 * the process reads.  path: for the message only, cut to fit. */
typedef struct seen_file {
    dev_t dev;
    ino_t ino;
    int tree;
    char path[232];
} seen_file;

/* The first entries live in static storage, so that noting a read never
 * allocates in the common case (the allocation-failure tests count every
 * malloc); past them the table grows on the heap and is never freed. */
#define SEEN_STATIC 256
static seen_file seen_static[SEEN_STATIC];
static seen_file *seen_v = seen_static;
static size_t seen_n, seen_cap = SEEN_STATIC;
static int seen_lost; /* an entry could not be kept: every write is refused */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork while another thread notes a read (check reads the expected
 * outputs on a thread while ORT runs, src/judge/fixture.c, and a lost
 * worker is forked again from inside that run) must not leave the child a
 * locked table: the lock is held across every fork, released on both
 * sides. */
static void seen_fork_prepare(void)
{
    pthread_mutex_lock(&seen_lock);
}

static void seen_fork_done(void)
{
    pthread_mutex_unlock(&seen_lock);
}

static void seen_once(void)
{
    pthread_atfork(seen_fork_prepare, seen_fork_done, seen_fork_done);
}

static void seen_add(dev_t dev, ino_t ino, int tree, const char *path)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, seen_once);
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < seen_n; i++)
        if (seen_v[i].dev == dev && seen_v[i].ino == ino && seen_v[i].tree == tree) {
            pthread_mutex_unlock(&seen_lock);
            return;
        }
    if (seen_n == seen_cap) {
        size_t cap = 2 * seen_cap;
        seen_file *v = malloc(cap * sizeof *v);
        if (!v) {
            seen_lost = 1;
            pthread_mutex_unlock(&seen_lock);
            return;
        }
        memcpy(v, seen_v, seen_n * sizeof *v);
        if (seen_v != seen_static) free(seen_v);
        seen_v = v;
        seen_cap = cap;
    }
    seen_file *f = &seen_v[seen_n++];
    f->dev = dev;
    f->ino = ino;
    f->tree = tree;
    snprintf(f->path, sizeof f->path, "%s", path ? path : "");
    pthread_mutex_unlock(&seen_lock);
}

void onp_out_note_read(const char *path)
{
    struct stat st;
    if (path && stat(path, &st) == 0) seen_add(st.st_dev, st.st_ino, 0, path);
}

void onp_out_note_tree(const char *dir)
{
    struct stat st;
    if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) seen_add(st.st_dev, st.st_ino, 1, dir);
}

/* The entry for (dev, ino, tree) copied into *out; 1 when found. */
static int seen_find(dev_t dev, ino_t ino, int tree, seen_file *out)
{
    int found = 0;
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < seen_n && !found; i++)
        if (seen_v[i].dev == dev && seen_v[i].ino == ino && seen_v[i].tree == tree) {
            *out = seen_v[i];
            found = 1;
        }
    pthread_mutex_unlock(&seen_lock);
    return found;
}

static int seen_has_trees(void)
{
    int any = 0;
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < seen_n && !any; i++) any = seen_v[i].tree;
    pthread_mutex_unlock(&seen_lock);
    return any;
}

/* The folder part of `path` ("." when there is none), in buf. */
static const char *dir_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    if (slash == path) return "/";
    size_t len = (size_t)(slash - path);
    if (len >= n) return NULL;
    memcpy(buf, path, len);
    buf[len] = '\0';
    return buf;
}

/* 1 (entry in *out) when folder `dir`, or a folder above it, is a noted
 * tree or one of extra[0..n_extra) (tree set, path its name).  Walks up
 * through ".." by descriptor, so links and relative paths resolve as the
 * kernel resolves them. */
static int tree_above(const char *dir, const seen_file *extra, size_t n_extra, seen_file *out)
{
    if (!n_extra && !seen_has_trees()) return 0;
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (int depth = 0; fd >= 0 && depth < 4096; depth++) {
        struct stat st, up;
        if (fstat(fd, &st) != 0) break;
        for (size_t i = 0; i < n_extra; i++)
            if (extra[i].dev == st.st_dev && extra[i].ino == st.st_ino) {
                *out = extra[i];
                close(fd);
                return 1;
            }
        if (seen_find(st.st_dev, st.st_ino, 1, out)) {
            close(fd);
            return 1;
        }
        int parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        close(fd);
        fd = parent;
        if (fd < 0 || fstat(fd, &up) != 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino))
            break; /* the root is its own parent */
    }
    if (fd >= 0) close(fd);
    return 0;
}

/* 1 (entry in *out) when the folder holding `path`, or a folder above it,
 * is a noted tree. */
static int inside_tree(const char *path, seen_file *out)
{
    if (!seen_has_trees()) return 0;
    char buf[4096];
    const char *dir = dir_of(path, buf, sizeof buf);
    return dir ? tree_above(dir, NULL, 0, out) : 0;
}

/* How `path` is to be written: refused (-1, e filled), replaced through a
 * temporary (0), or written in place (1: a character device or a FIFO). */
static int out_kind(const char *path, onp_error *e)
{
    seen_file f;
    struct stat st;
    int exists = stat(path, &st) == 0;
    pthread_mutex_lock(&seen_lock);
    int lost = seen_lost;
    pthread_mutex_unlock(&seen_lock);
    if (lost)
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1,
                             "out of memory noting the files read; nothing is written");
    if (exists && seen_find(st.st_dev, st.st_ino, 0, &f))
        return onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1,
                             "is the same file as '%s', which this command reads; refusing to "
                             "overwrite it",
                             f.path);
    if (inside_tree(path, &f))
        return onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1,
                             "is inside the fixture folder '%s', which this command reads; "
                             "refusing to write there",
                             f.path);
    if (!exists) return 0;
    if (S_ISREG(st.st_mode)) return 0;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return 1;
    return onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1, "%s",
                         S_ISDIR(st.st_mode) ? "is a folder, not a file"
                                             : "is not a regular file, a character device or a "
                                               "FIFO; refusing to replace it");
}

int onp_out_check(const char *path, onp_error *e)
{
    return out_kind(path, e) < 0 ? -1 : 0;
}

// --- new output folders (--save-repro) -----------------------------------------

/* A short word for what lstat found. */
static const char *kind_word(mode_t m)
{
    return S_ISLNK(m)   ? "a symbolic link"
           : S_ISDIR(m) ? "a folder"
           : S_ISREG(m) ? "a file"
                        : "a special file";
}

int onp_out_check_new_dir(const char *dir, const char *const *reads, size_t n_reads, onp_error *e)
{
    char name[4096], pbuf[4096];
    size_t len = dir ? strlen(dir) : 0;
    while (len > 1 && dir[len - 1] == '/') len--; /* "out/" is "out" */
    if (!len || len >= sizeof name)
        return onp_error_set(e, ONP_ERR_USAGE, dir ? dir : "", NULL, -1,
                             "is not a usable folder name");
    memcpy(name, dir, len);
    name[len] = '\0';
    pthread_mutex_lock(&seen_lock);
    int lost = seen_lost;
    pthread_mutex_unlock(&seen_lock);
    if (lost)
        return onp_error_set(e, ONP_ERR_NOMEM, dir, NULL, -1,
                             "out of memory noting the files read; nothing is written");
    struct stat st;
    if (lstat(name, &st) == 0)
        return onp_error_set(e, ONP_ERR_USAGE, dir, NULL, -1,
                             "exists (%s); an output folder must be new: nothing is written into "
                             "an existing folder or through a link",
                             kind_word(st.st_mode));
    if (errno != ENOENT)
        return onp_error_set(e, ONP_ERR_USAGE, dir, NULL, -1, "cannot be made: %s",
                             strerror(errno));
    const char *parent = dir_of(name, pbuf, sizeof pbuf);
    if (!parent || stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return onp_error_set(e, ONP_ERR_IO, dir, NULL, -1, "cannot be made: its folder '%s' %s",
                             parent ? parent : "?",
                             parent && stat(parent, &st) == 0 ? "is not a folder"
                                                              : "does not exist");
    seen_file extra[16];
    size_t n = 0;
    for (size_t i = 0; i < n_reads && n < sizeof extra / sizeof *extra; i++)
        if (reads[i] && stat(reads[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            extra[n].dev = st.st_dev;
            extra[n].ino = st.st_ino;
            extra[n].tree = 1;
            snprintf(extra[n].path, sizeof extra[n].path, "%s", reads[i]);
            n++;
        }
    seen_file f;
    if (tree_above(parent, extra, n, &f))
        return onp_error_set(e, ONP_ERR_USAGE, dir, NULL, -1,
                             "is inside the folder '%s', which this command reads; refusing to "
                             "write there",
                             f.path);
    return 0;
}

int onp_out_mkdir_new(const char *dir, const char *const *reads, size_t n_reads, onp_error *e)
{
    if (onp_out_check_new_dir(dir, reads, n_reads, e)) return -1;
    if (mkdir(dir, 0777) == 0) return 0;
    if (errno == EEXIST) /* made by someone else since the check */
        return onp_error_set(e, ONP_ERR_USAGE, dir, NULL, -1,
                             "exists; an output folder must be new: nothing is written into an "
                             "existing folder or through a link");
    return onp_error_set(e, ONP_ERR_IO, dir, NULL, -1, "cannot be made: %s", strerror(errno));
}

// --- temporaries, removed on SIGINT / SIGTERM / SIGHUP -------------------------

/* The temporaries being written.  A slot is claimed (1), filled, then
 * published (2); the handler removes published ones of this process only
 * (a forked worker inherits the table and the handler, never the files).
 * Lock-free atomics, unlink, signal and raise: all async-signal-safe. */
#define TMP_SLOTS 32
static struct {
    atomic_int state; /* 0 free, 1 being filled, 2 a live temporary */
    pid_t pid;
    char path[4096];
} tmp_slot[TMP_SLOTS];

static int tmp_claim(const char *path)
{
    size_t n = strlen(path);
    if (n >= sizeof tmp_slot[0].path) return -1;
    for (int i = 0; i < TMP_SLOTS; i++) {
        int expect = 0;
        if (!atomic_compare_exchange_strong(&tmp_slot[i].state, &expect, 1)) continue;
        memcpy(tmp_slot[i].path, path, n + 1);
        tmp_slot[i].pid = getpid();
        atomic_store(&tmp_slot[i].state, 2);
        return i;
    }
    return -1; /* more than TMP_SLOTS writes at once: this one is unguarded */
}

static void tmp_release(int slot)
{
    if (slot >= 0) atomic_store(&tmp_slot[slot].state, 0);
}

static void on_fatal_signal(int sig)
{
    int saved = errno;
    pid_t me = getpid();
    for (int i = 0; i < TMP_SLOTS; i++)
        if (atomic_load(&tmp_slot[i].state) == 2 && tmp_slot[i].pid == me) unlink(tmp_slot[i].path);
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig);
}

void onp_out_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

// --- writing -------------------------------------------------------------------

/* Write every piece to fd; 0, or an errno value (EIO for a write of 0). */
static int write_pieces(int fd, const onp_piece *pieces, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = pieces[i].p;
        size_t left = pieces[i].n;
        while (left) {
            ssize_t w = write(fd, p, left > (1u << 30) ? (1u << 30) : left);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return errno;
            if (w == 0) return EIO;
            p += w;
            left -= (size_t)w;
        }
    }
    return 0;
}

/* `path` with its last component cut so that "NAME.tmp.XXXXXX" fits in
 * NAME_MAX, plus that suffix (random letters), in a new string. */
static char *tmp_name(const char *path)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0, base = strlen(path) - dir;
    const size_t suffix = sizeof ".tmp.XXXXXX" - 1;
    if (base > NAME_MAX - suffix) base = NAME_MAX - suffix;
    char *t = malloc(dir + base + suffix + 1);
    if (!t) return NULL;
    memcpy(t, path, dir + base);
    unsigned char rnd[6];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        static atomic_uint counter;
        unsigned x = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^
                     atomic_fetch_add(&counter, 7919u);
        for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (unsigned char)(x >> (4 * i) ^ i * 131);
    }
    char *s = t + dir + base;
    memcpy(s, ".tmp.", 5);
    for (size_t i = 0; i < sizeof rnd; i++) s[5 + i] = abc[rnd[i] % (sizeof abc - 1)];
    s[suffix] = '\0';
    return t;
}

/* A character device or FIFO: written in place, never replaced.  Opened
 * without blocking: a FIFO that no process reads is refused at once
 * (ENXIO), where open() would wait for a reader for ever; then written
 * blocking, as stdout is. */
static int write_in_place(const char *path, const onp_piece *pieces, size_t n, onp_error *e)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO)
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1,
                             "cannot open: a FIFO that no process reads");
    if (fd < 0)
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open: %s", strerror(errno));
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)) {
        int err = errno;
        close(fd);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open: %s", strerror(err));
    }
    int err = write_pieces(fd, pieces, n);
    if (close(fd) != 0 && !err) err = errno;
    if (err) return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot write: %s", strerror(err));
    return 0;
}

int onp_write_atomic(const char *path, const onp_piece *pieces, size_t n, onp_error *e)
{
    int kind = out_kind(path, e);
    if (kind < 0) return -1;
    if (kind == 1) return write_in_place(path, pieces, n, e);
    char *tmp = NULL;
    int fd = -1, slot = -1;
    for (int attempt = 0; attempt < 64 && fd < 0; attempt++) {
        free(tmp);
        if (!(tmp = tmp_name(path)))
            return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
        /* published before it exists, so a signal between the two removes
         * at most a name that is not there yet */
        slot = tmp_claim(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
        if (fd < 0) {
            int err = errno;
            tmp_release(slot);
            slot = -1;
            if (err != EEXIST) {
                onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot create: %s", strerror(err));
                free(tmp);
                return -1;
            }
        }
    }
    if (fd < 0) {
        free(tmp);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot create a temporary beside it");
    }
    int err = write_pieces(fd, pieces, n);
    const char *what = "cannot write";
    if (!err && fsync(fd) != 0 && errno != EINVAL) err = errno, what = "cannot finish";
    if (close(fd) != 0 && !err) err = errno, what = "cannot finish";
    if (!err && rename(tmp, path) != 0) err = errno, what = "cannot rename into place";
    if (err) {
        onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "%s: %s", what, strerror(err));
        unlink(tmp);
    }
    tmp_release(slot);
    free(tmp);
    return err ? -1 : 0;
}

int onp_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// --- reading a whole regular file ------------------------------------------------

int onp_read_regular(const char *path, size_t cap, const char *what, onp_buf *b, onp_error *e)
{
    onp_buf_init(b, cap);
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open: %s", strerror(errno));
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st))
        why = "cannot stat";
    else if (S_ISDIR(st.st_mode))
        why = "is a folder, not a file";
    else if (!S_ISREG(st.st_mode))
        why = "is not a regular file";
    if (why) {
        close(fd);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "%s", why);
    }
    onp_out_note_read(path);
    char chunk[65536];
    ssize_t n;
    int bad = 0;
    while (!b->failed && (n = read(fd, chunk, sizeof chunk)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            bad = 1;
            break;
        }
        onp_buf_append(b, chunk, (size_t)n);
    }
    close(fd);
    if (bad || b->failed)
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot read%s", what);
    return 0;
}
