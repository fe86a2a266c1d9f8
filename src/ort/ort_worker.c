/*
 * ort_worker.c — sessions that live in a worker process
 * (onp_session_opts.isolate, include/onnxparity/ort.h).
 *
 * ONNX Runtime kernels can crash or hang on hostile models, and a custom
 * operator is arbitrary code.  An isolated session forks a worker that
 * creates the OrtSession and runs it; the caller's process never calls ORT
 * for that session.  A crash or a timeout then costs one call: it becomes an
 * ONP_ERR_RUNTIME naming the signal or the limit, and the next call forks a
 * fresh worker that loads the model again.
 *
 * The two processes talk over a socketpair (send with MSG_NOSIGNAL: a dead
 * worker can never SIGPIPE its parent).  Both are the same binary, so
 * integers travel in native byte order and an onp_error travels as its
 * struct.  Messages, parent to worker: RUN = inputs + output names; worker
 * to parent, once after the fork and once per RUN: the ORT log lines since
 * the last message, a status (an onp_error on failure), then the session's
 * introspection (after the fork) or the outputs (after a RUN).  A tensor
 * under SHM_MIN bytes goes inline, straight from one tensor's storage to
 * the socket and from the socket into the other's.  A bigger one goes as a
 * sealed memfd that the receiver maps (see "tensors in shared memory"):
 * no bytes on the socket, no copy on receipt; and an output whose shape
 * the model's declaration predicts for the inputs is written by ORT into
 * that memfd in the first place (out_shm_make), so it crosses without a
 * single copy.  A big input goes by its address instead when the worker
 * can read the parent's memory (process_vm_readv, probed once at the
 * start): one copy, into the worker's own tensor, and no shared page,
 * which costs here about twice a private one to fault in.
 *
 * The worker: never returns into the caller's code (it ends with _exit, so
 * no atexit handler and no stdio buffer of the parent runs twice), closes
 * every inherited descriptor but its socket and stdio, ends when the
 * parent's end of the socket closes (a watchdog thread), and dumps no core.  The parent kills it
 * (SIGKILL) and reaps it when the session is closed, when a call times out, and after a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ort/ort_internal.h"
#include "tensor/adopt.h"
#include "util/fsio.h"

#define CHAN_BUF (64 * 1024)
#define SHM_MIN (1u << 20) /* numeric tensors this big cross in shared memory */
#define FD_QUEUE 8
#define LOG_MAX 8192
#define NAME_NULL UINT32_MAX

/* Channel results; all distinct from the -1 that means "the worker answered
 * with an error". */
enum { CH_OK = 0, CH_EOF = -10, CH_TIMEOUT = -11, CH_ERR = -12, CH_BAD = -13, CH_SKIP = -14 };
/* CH_SKIP: a tensor this side could not hold (the memory cap, out of
 * memory) was read and dropped; the stream is still in step and e says why. */
enum { MSG_RUN = 0x4e55522e /* ".RUN" */ };

/* The suffix of e->field that marks a call lost with its worker (the rest
 * of the field is the call: "Run", "CreateSession"). */
#define LOST_CRASHED "[crashed]"
#define LOST_TIMEOUT "[timeout]"

const char *onp_ort_lost_worker(const onp_error *e)
{
    if (e->code != ONP_ERR_RUNTIME) return NULL;
    if (strstr(e->field, LOST_CRASHED)) return "crashed";
    if (strstr(e->field, LOST_TIMEOUT)) return "timeout";
    return NULL;
}

typedef struct onp_worker onp_worker;

struct onp_worker {
    pid_t pid;   /* the running worker, or 0 */
    int fd;      /* the parent's end of the socket, or -1 */
    int vm_read; /* the running worker can read this process's memory (its
                    open reply says so): big inputs cross that way */
    onp_ort *ort;
    pthread_mutex_t mu; /* one call at a time */
    /* What the worker opens, owned copies (the caller's are only valid
     * during onp_session_open*): */
    char *path;     /* model path, or NULL */
    uint8_t *bytes; /* model bytes when path is NULL: [n] */
    size_t n;
    char *label;
    onp_session_opts opts; /* isolate = 0; strings and arrays in `arena` */
    onp_arena arena;
};

// --- the channel -------------------------------------------------------------------

/* A buffered stream over the socket with an optional deadline (milliseconds
 * on CLOCK_MONOTONIC, 0 = none). */
typedef struct chan {
    int fd;
    int64_t deadline;
    size_t pos, len;   /* rbuf[pos..len) is received, not yet read */
    size_t wlen;       /* wbuf[0..wlen) is written, not yet sent */
    int fds[FD_QUEUE]; /* descriptors received (SCM_RIGHTS), not yet taken: fds[0..n_fds) */
    int n_fds;
    uint8_t rbuf[CHAN_BUF];
    uint8_t wbuf[CHAN_BUF];
} chan;

/* A fresh channel over fd. */
static void chan_init(chan *c, int fd, int64_t deadline)
{
    c->fd = fd;
    c->deadline = deadline;
    c->pos = c->len = c->wlen = 0;
    c->n_fds = 0;
}

/* Close the descriptors received and never taken (a stream given up midway). */
static void chan_drop_fds(chan *c)
{
    for (int i = 0; i < c->n_fds; i++) close(c->fds[i]);
    c->n_fds = 0;
}

/* The oldest descriptor received and not yet taken (the caller owns it), or -1. */
static int chan_take_fd(chan *c)
{
    if (!c->n_fds) return -1;
    int fd = c->fds[0];
    memmove(c->fds, c->fds + 1, (size_t)(c->n_fds - 1) * sizeof *c->fds);
    c->n_fds--;
    return fd;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for `events` or the deadline passes. */
static int chan_wait(const chan *c, short events)
{
    for (;;) {
        int ms = -1;
        if (c->deadline) {
            int64_t left = c->deadline - now_ms();
            if (left <= 0) return CH_TIMEOUT;
            ms = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd p = {.fd = c->fd, .events = events};
        int r = poll(&p, 1, ms);
        if (r > 0) return CH_OK;
        if (r == 0) continue; /* re-check the deadline */
        if (errno != EINTR) return CH_ERR;
    }
}

static int send_all(chan *c, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        int w = chan_wait(c, POLLOUT);
        if (w) return w;
        ssize_t k = send(c->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return errno == EPIPE || errno == ECONNRESET ? CH_EOF : CH_ERR;
        }
        b += k;
        n -= (size_t)k;
    }
    return CH_OK;
}

/* n > 0 bytes from p with the descriptor fd attached to the first of them
 * (SCM_RIGHTS; fd stays the caller's), after what is buffered. */
static int send_fd(chan *c, const void *p, size_t n, int fd);

static int chan_flush(chan *c)
{
    int r = send_all(c, c->wbuf, c->wlen);
    c->wlen = 0;
    return r;
}

static int chan_put(chan *c, const void *p, size_t n)
{
    if (n >= CHAN_BUF / 4) { /* big: straight from the caller's memory */
        int r = chan_flush(c);
        return r ? r : send_all(c, p, n);
    }
    if (c->wlen + n > CHAN_BUF) {
        int r = chan_flush(c);
        if (r) return r;
    }
    memcpy(c->wbuf + c->wlen, p, n);
    c->wlen += n;
    return CH_OK;
}

/* Bytes from the socket into p[0..n); descriptors that come with them
 * join c->fds (more than FD_QUEUE waiting, or any lost: CH_BAD). */
static int recv_some(chan *c, void *p, size_t n, size_t *got)
{
    for (;;) {
        int w = chan_wait(c, POLLIN);
        if (w) return w;
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(FD_QUEUE * sizeof(int))];
        } ctl;
        struct iovec iov = {p, n};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
        ssize_t k = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        int bad = k >= 0 && (mh.msg_flags & MSG_CTRUNC);
        for (struct cmsghdr *h = k >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; h; h = CMSG_NXTHDR(&mh, h)) {
            if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
            size_t nf = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < nf; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
                if (c->n_fds < FD_QUEUE) {
                    c->fds[c->n_fds++] = fd;
                } else {
                    close(fd);
                    bad = 1;
                }
            }
        }
        if (bad) return CH_BAD;
        if (k > 0) {
            *got = (size_t)k;
            return CH_OK;
        }
        if (k == 0) return CH_EOF;
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
        return errno == ECONNRESET ? CH_EOF : CH_ERR;
    }
}

static int chan_get(chan *c, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        if (c->pos < c->len) {
            size_t k = c->len - c->pos < n ? c->len - c->pos : n;
            memcpy(b, c->rbuf + c->pos, k);
            c->pos += k;
            b += k;
            n -= k;
            continue;
        }
        size_t got;
        int r;
        if (n >= CHAN_BUF / 4) { /* big: straight into the caller's memory */
            if ((r = recv_some(c, b, n, &got))) return r;
            b += got;
            n -= got;
        } else {
            if ((r = recv_some(c, c->rbuf, CHAN_BUF, &got))) return r;
            c->pos = 0;
            c->len = got;
        }
    }
    return CH_OK;
}

/* Read and drop n bytes. */
static int chan_skip(chan *c, uint64_t n)
{
    uint8_t sink[4096];
    while (n) {
        size_t k = n < sizeof sink ? (size_t)n : sizeof sink;
        int r = chan_get(c, sink, k);
        if (r) return r;
        n -= k;
    }
    return CH_OK;
}

static int send_fd(chan *c, const void *p, size_t n, int fd)
{
    int r = chan_flush(c);
    if (r) return r;
    for (;;) {
        int w = chan_wait(c, POLLOUT);
        if (w) return w;
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(sizeof(int))];
        } ctl;
        memset(&ctl, 0, sizeof ctl);
        struct iovec iov = {(void *)p, n};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
        struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &fd, sizeof fd);
        ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return errno == EPIPE || errno == ECONNRESET ? CH_EOF : CH_ERR;
        }
        return send_all(c, (const uint8_t *)p + k, n - (size_t)k);
    }
}

#define PUT(c, v) chan_put((c), &(v), sizeof(v))
#define GET(c, v) chan_get((c), &(v), sizeof(v))

static int put_str(chan *c, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : NAME_NULL;
    int r = PUT(c, n);
    return r || !s ? r : chan_put(c, s, n);
}

/* A string into a fresh malloc'd copy (*s = NULL for a NULL string). */
static int get_str(chan *c, char **s)
{
    uint32_t n;
    *s = NULL;
    int r = GET(c, n);
    if (r || n == NAME_NULL) return r;
    if (n > (1u << 30)) return CH_BAD;
    char *p = malloc((size_t)n + 1);
    if (!p) return CH_BAD;
    if ((r = chan_get(c, p, n))) {
        free(p);
        return r;
    }
    p[n] = '\0';
    *s = p;
    return CH_OK;
}

// --- tensors in shared memory -------------------------------------------------------
/* A numeric tensor of SHM_MIN bytes or more crosses as a memfd: the sender
 * writes its bytes there once, seals the file's size (F_SEAL_SHRINK, GROW:
 * a mapping of it can then never fault past its end, whatever the other
 * process does) and passes the descriptor with the tensor's header; the
 * receiver maps it privately (copy-on-write) and the tensor holds the
 * mapping.  No bytes cross the socket, none are copied on receipt, and the
 * receiver's pages are the sender's until written. */

/* Map the page tables of [p, p + n) readable now, in one call, instead of
 * one fault per few pages as the reader walks them (issue 34): a tensor
 * received is read whole (compared, or run).  Not MAP_POPULATE, which on a
 * private writable mapping breaks copy-on-write and copies every page.
 * Best effort: a kernel before 5.14 refuses it and the faults happen as
 * before. */
static void populate_read(void *p, size_t n)
{
#ifdef MADV_POPULATE_READ
    (void)madvise(p, n, MADV_POPULATE_READ);
#else
    (void)p;
    (void)n;
#endif
}

/* A mapping held by a tensor (onp_tensor_adopt), unmapped with it. */
typedef struct shm_map {
    void *p;
    size_t n;
} shm_map;

static void shm_unmap(void *owner)
{
    shm_map *m = owner;
    munmap(m->p, m->n);
    free(m);
}

/* A new memfd `label` (sealable) of nb bytes, mapped shared at *p: its
 * descriptor, or -1 (nothing left open). */
static int shm_create(const char *label, size_t nb, void **p)
{
    int fd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)nb) == 0)
        *p = mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (*p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A sealed memfd holding t's bytes, or -1 (then the bytes go inline). */
static int shm_of(const onp_tensor *t)
{
    void *p;
    int fd = shm_create("onnxparity-tensor", t->nbytes, &p);
    if (fd < 0) return -1;
    memcpy(p, t->data, t->nbytes);
    munmap(p, t->nbytes);
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A tensor this process could not make (e): CH_SKIP where it may not hold
 * it (the memory cap: ONP_ERR_INPUT or ONP_ERR_NOMEM), else CH_BAD. */
static int not_held(const onp_error *e)
{
    return e->code == ONP_ERR_INPUT || e->code == ONP_ERR_NOMEM ? CH_SKIP : CH_BAD;
}

/* The tensor *t, shaped (dtype, rank, dims) over nb bytes, from the file
 * behind fd (taken: closed here) at offset `off`, when `ok` (the caller's
 * checks of the file passed).  Mapped privately (copy-on-write: ORT may
 * write, the file never changes) from `lead` bytes before off (off's place
 * in its page, so the mapping starts on a page) and adopted in place: the
 * bytes come from the page cache or the sender's pages, not from a copy
 * (issue 34).  A lead that leaves the elements unaligned costs one copy.
 * CH_OK; CH_SKIP with e set when this process may not hold it (the memory
 * cap); CH_BAD when !ok, the map fails, or a shape is not nb bytes. */
static int map_take(int fd, int ok, uint64_t off, uint64_t lead, int32_t dtype, int rank,
                    const int64_t *dims, uint64_t nb, onp_tensor *t, onp_error *e)
{
    void *p = MAP_FAILED;
    shm_map *m = NULL;
    if (ok && (m = malloc(sizeof *m)))
        p = mmap(NULL, (size_t)(nb + lead), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                 (off_t)(off - lead));
    close(fd);
    if (p == MAP_FAILED) {
        free(m);
        return CH_BAD;
    }
    m->p = p;
    m->n = (size_t)(nb + lead);
    populate_read(p, m->n);
    const onp_dtype_desc *d = onp_dtype_info(dtype);
    size_t align = d && d->size ? (d->size > 8 ? 8 : d->size) : 1;
    int rc = CH_OK;
    if (!(lead % align)) {
        if (!onp_tensor_adopt(t, dtype, rank, dims, (char *)p + lead, (size_t)nb, shm_unmap, m, e))
            return CH_OK; /* the mapping is t's now */
        rc = not_held(e);
    } else {
        /* an unaligned view of the parent's (onp_tfile_read_view): ORT and
         * this process want the elements aligned, so one copy, here */
        if (onp_tensor_alloc(t, dtype, rank, dims, e))
            rc = not_held(e);
        else if (t->nbytes != nb)
            rc = CH_BAD;
        else
            memcpy(t->data, (char *)p + lead, (size_t)nb);
        if (rc == CH_BAD) onp_tensor_release(t);
    }
    shm_unmap(m);
    return rc;
}

/* The tensor received as memfd `fd` (taken: closed here) into *t, shaped
 * (dtype, rank, dims) over nb bytes (map_take).  CH_BAD for a file that is
 * not sealed at a size of at least nb bytes. */
static int shm_take(int fd, int32_t dtype, int rank, const int64_t *dims, uint64_t nb,
                    onp_tensor *t, onp_error *e)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    int ok = nb && nb <= SIZE_MAX && seals >= 0 && (seals & F_SEAL_SHRINK) && !fstat(fd, &st) &&
             (uint64_t)st.st_size >= nb;
    return map_take(fd, ok, 0, 0, dtype, rank, dims, nb, t, e);
}

/* The tensor the parent read from a file by mapping it (src/tfile: a .pb
 * raw_data or .npy array): fd, a descriptor of that file (taken: closed
 * here), holds its nb bytes at offset `off` (map_take).  The offset within
 * the page is kept, and with it the alignment the parent's tensor had.
 * CH_BAD for a file that is not regular or does not hold off + nb bytes. */
static int file_take(int fd, uint64_t off, int32_t dtype, int rank, const int64_t *dims,
                     uint64_t nb, onp_tensor *t, onp_error *e)
{
    struct stat st;
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t lead = pg > 0 ? off % (uint64_t)pg : 0;
    int ok = pg > 0 && nb && nb <= SIZE_MAX - lead && off <= UINT64_MAX - nb && !fstat(fd, &st) &&
             S_ISREG(st.st_mode) && (uint64_t)st.st_size >= off + nb;
    return map_take(fd, ok, off, lead, dtype, rank, dims, nb, t, e);
}

/* A descriptor of the file whose map t's bytes are in (the reader's zero-
 * copy view, src/util/fsio.h), with their offset in it; -1 when t owns its
 * bytes, or the file cannot be opened again as the same file. */
static int file_of(const onp_tensor *t, uint64_t *off)
{
    if ((t->free_fn != onp_map_unref_void && t->free_fn != onp_map_unref_view) || !t->owner ||
        !t->data)
        return -1;
    const onp_map *m = t->owner;
    const uint8_t *d = t->data;
    if (!m->mapped || d < m->p || t->nbytes > m->n || (size_t)(d - m->p) > m->n - t->nbytes)
        return -1;
    *off = (uint64_t)(d - m->p);
    return onp_map_reopen(m);
}

// --- tensors on the channel ----------------------------------------------------------
/* A numeric tensor: name, dtype, rank, dims, byte count, then one byte:
 * 0 = the bytes follow inline, 1 = a memfd came with that byte, 2 = the
 * tensor's address in the parent follows (process_vm_readv), 3 = a
 * descriptor of the file the parent mapped it from came with that byte and
 * its offset there follows (file_take); 2 and 3 from the parent only. */

/* t onto the channel.  shm_fd >= 0: t's bytes are that memfd's (ORT wrote
 * them there), sent as they are, without a copy.  vm_read (the parent, to a
 * worker that can read its memory): a big tensor goes as its address, and
 * the worker copies it straight into its own tensor (process_vm_readv);
 * t must stay put until the worker answers. */
static int put_tensor(chan *c, const onp_tensor *t, int shm_fd, int vm_read, int to_worker)
{
    int32_t rank = t->rank;
    int r = put_str(c, t->name);
    if (!r) r = PUT(c, t->dtype);
    if (!r) r = PUT(c, rank);
    if (!r && rank > 0 && rank <= ONP_MAX_RANK)
        r = chan_put(c, t->dims, (size_t)rank * sizeof t->dims[0]);
    if (r) return r;
    if (t->dtype != ONP_STRING) {
        uint64_t nb = t->nbytes;
        uint64_t off = 0;
        int ffd = nb >= SHM_MIN && to_worker && shm_fd < 0 ? file_of(t, &off) : -1;
        if (ffd >= 0) { /* mapped from a file: the worker maps it too */
            uint8_t how = 3;
            r = PUT(c, nb);
            if (!r) r = send_fd(c, &how, 1, ffd);
            close(ffd);
            return r ? r : PUT(c, off);
        }
        if (nb >= SHM_MIN && vm_read && shm_fd < 0) {
            uint8_t how = 2;
            uint64_t at = (uint64_t)(uintptr_t)t->data;
            r = PUT(c, nb);
            if (!r) r = PUT(c, how);
            return r ? r : PUT(c, at);
        }
        int fd = -1;
        if (nb >= SHM_MIN && shm_fd >= 0 &&
            !fcntl(shm_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
            fd = shm_fd;
        else if (nb >= SHM_MIN)
            fd = shm_of(t);
        uint8_t how = fd >= 0;
        r = PUT(c, nb);
        if (!r) r = fd >= 0 ? send_fd(c, &how, 1, fd) : PUT(c, how);
        if (fd >= 0 && fd != shm_fd) close(fd);
        return r || how || !nb ? r : chan_put(c, t->data, t->nbytes);
    }
    for (int64_t i = 0; !r && i < t->count; i++) {
        uint64_t len = t->strings[i].n;
        r = PUT(c, len);
    }
    for (int64_t i = 0; !r && i < t->count; i++)
        if (t->strings[i].n) r = chan_put(c, t->strings[i].p, t->strings[i].n);
    return r;
}

/* nb bytes at address `at` in process pid into dst. */
static int vm_copy(pid_t pid, void *dst, uint64_t at, size_t nb)
{
    size_t done = 0;
    while (done < nb) {
        struct iovec l = {(char *)dst + done, nb - done};
        struct iovec r = {(void *)(uintptr_t)(at + done), nb - done};
        ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (k <= 0) return CH_BAD;
        done += (size_t)k;
    }
    return CH_OK;
}

/* Read a tensor into *t (released on failure).  Out-of-memory and
 * inconsistent sizes are CH_BAD. */
static int get_tensor(chan *c, onp_tensor *t, int from_parent, onp_error *e)
{
    memset(t, 0, sizeof *t);
    char *name;
    int32_t dtype, rank;
    int64_t dims[ONP_MAX_RANK];
    int r = get_str(c, &name);
    if (!r) r = GET(c, dtype);
    if (!r) r = GET(c, rank);
    if (!r && (rank < 0 || rank > ONP_MAX_RANK)) r = CH_BAD;
    if (!r && rank) r = chan_get(c, dims, (size_t)rank * sizeof dims[0]);
    if (r) {
        free(name);
        return r;
    }
    if (dtype != ONP_STRING) {
        uint64_t nb;
        uint8_t how = 0;
        if (!(r = GET(c, nb))) r = GET(c, how);
        if (!r && (how > 3 || (how >= 2 && !from_parent))) r = CH_BAD;
        uint64_t at = 0;
        if (!r && how >= 2) r = GET(c, at);
        if (!r && (how == 1 || how == 3)) {
            int fd = chan_take_fd(c);
            r = fd < 0     ? CH_BAD
                : how == 1 ? shm_take(fd, dtype, rank, dims, nb, t, e)
                           : file_take(fd, at, dtype, rank, dims, nb, t, e);
        } else if (!r) {
            if (onp_tensor_alloc(t, dtype, rank, dims, e)) {
                /* dims that describe nb bytes, but no room for them here */
                int64_t cnt;
                size_t want;
                const onp_dtype_desc *d = onp_dtype_info(dtype);
                int same =
                    d && !onp_shape_count(rank, dims, d->size, &cnt, &want, NULL) && want == nb;
                r = same && (e->code == ONP_ERR_INPUT || e->code == ONP_ERR_NOMEM) &&
                            (how == 2 || !chan_skip(c, nb))
                        ? CH_SKIP
                        : CH_BAD;
            } else if (t->nbytes != nb) {
                r = CH_BAD;
            } else if (how == 2) {
                r = vm_copy(getppid(), t->data, at, t->nbytes);
            } else if (nb) {
                r = chan_get(c, t->data, t->nbytes);
            }
        }
    } else {
        int64_t count;
        size_t *lens = NULL;
        if (onp_shape_count(rank, dims, 0, &count, NULL, e) ||
            (uint64_t)count > SIZE_MAX / sizeof *lens)
            r = CH_BAD;
        else if (!(lens = malloc(((size_t)count ? (size_t)count : 1) * sizeof *lens)))
            r = CH_BAD;
        for (int64_t i = 0; !r && i < count; i++) {
            uint64_t len;
            if (!(r = GET(c, len))) lens[i] = (size_t)len;
        }
        if (!r && onp_tensor_alloc_strings(t, rank, dims, lens, e)) r = CH_BAD;
        for (int64_t i = 0; !r && i < count; i++)
            if (lens[i]) r = chan_get(c, onp_tensor_string_at(t, i), lens[i]);
        free(lens);
    }
    t->name = name; /* NULL or owned */
    if (r) onp_tensor_release(t);
    return r;
}

// --- the worker's side ---------------------------------------------------------------

/* Read by a new worker at its own address of it, which after the fork is
 * the parent's too: whether process_vm_readv works here (a seccomp filter
 * or a ptrace policy may refuse it) is asked once, not per tensor. */
static const uint64_t vm_canary = 0x6f6e702d766d7264ull;

static int32_t vm_probe(void)
{
    uint64_t got = 0;
    return vm_copy(getppid(), &got, (uint64_t)(uintptr_t)&vm_canary, sizeof got) == CH_OK &&
           got == vm_canary;
}

/* Send the ORT log lines gathered since the last message. */
static int put_log(chan *c)
{
    static char log[LOG_MAX];
    log[0] = '\0';
    if (!onp_ort_log_take(log, sizeof log)) log[0] = '\0';
    return put_str(c, log);
}

static int put_io(chan *c, const onp_ort_io *io)
{
    int32_t kind = io->kind, rank = io->rank;
    int r = put_str(c, io->name);
    if (!r) r = PUT(c, kind);
    if (!r) r = PUT(c, io->dtype);
    if (!r) r = PUT(c, rank);
    for (int d = 0; !r && d < rank && d < ONP_MAX_RANK; d++) {
        r = PUT(c, io->dims[d]);
        if (!r) r = put_str(c, io->dim_names[d]);
    }
    return r;
}

/* After the open: the status, then what callers may ask the session. */
static int put_open_reply(chan *c, const onp_session *s, int rc, const onp_error *e, int32_t vm)
{
    int32_t st = rc;
    int r = put_log(c);
    if (!r) r = PUT(c, st);
    if (!r && rc) r = PUT(c, *e);
    if (r || rc) return r ? r : chan_flush(c);
    const onp_session_desc *d = &s->desc;
    int32_t level = d->opt_level, intra = d->intra_threads, inter = d->inter_threads,
            det = d->deterministic;
    uint64_t n_in = s->n_in, n_out = s->n_out, n_init = s->n_init;
    r = put_str(c, d->provider);
    if (!r) r = put_str(c, d->notes);
    if (!r) r = PUT(c, level);
    if (!r) r = PUT(c, intra);
    if (!r) r = PUT(c, inter);
    if (!r) r = PUT(c, det);
    if (!r) r = PUT(c, vm);
    if (!r) r = PUT(c, n_in);
    if (!r) r = PUT(c, n_out);
    if (!r) r = PUT(c, n_init);
    for (size_t i = 0; !r && i < s->n_in; i++) r = put_io(c, &s->in[i]);
    for (size_t i = 0; !r && i < s->n_out; i++) r = put_io(c, &s->out[i]);
    for (size_t i = 0; !r && i < s->n_init; i++) r = put_io(c, &s->init[i]);
    return r ? r : chan_flush(c);
}

/* A memfd that ORT writes one output into, mapped here. */
typedef struct out_shm {
    int fd; /* -1: none (the output's shape is not static, or it is small) */
    void *p;
    size_t n;
} out_shm;

/* For each of the n_out outputs of a run (names, or NULL: all) whose
 * shape its declaration predicts for the inputs in[n_in]
 * (onp_session_output_bytes), SHM_MIN bytes or more, a memfd for ORT to
 * write it into:
 * sh[i], bufs[i]; elsewhere fd -1 and NULL. */
static void out_shm_make(const onp_session *s, const onp_tensor *in, size_t n_in,
                         char *const *names, size_t n_out, out_shm *sh, void **bufs)
{
    for (size_t i = 0; i < n_out; i++) {
        sh[i] = (out_shm){-1, NULL, 0};
        bufs[i] = NULL;
        const char *name = names ? names[i] : i < s->n_out ? s->out[i].name : NULL;
        size_t nb = onp_session_output_bytes(s, name, in, n_in);
        if (nb < SHM_MIN) continue;
        void *p;
        int fd = shm_create("onnxparity-output", nb, &p);
        if (fd < 0) continue;
        sh[i] = (out_shm){fd, p, nb};
        bufs[i] = p;
    }
}

static void out_shm_free(out_shm *sh, size_t n)
{
    for (size_t i = 0; sh && i < n; i++)
        if (sh[i].fd >= 0) {
            munmap(sh[i].p, sh[i].n);
            close(sh[i].fd);
            sh[i].fd = -1;
        }
}

/* 1 when ORT's message `msg` refuses a pre-allocated (bound) output rather
 * than failing in a kernel.  A refusal in words not listed here fails the
 * run that ORT's own memory would have completed, so the table holds what
 * every ORT version the project loads writes.  How to add one: a row, the
 * phrase an ORT version writes for an output buffer whose shape is not the
 * run's, with the version. */
static int about_bound_output(const char *msg)
{
    static const char *const phrases[] = {
        /* 1.29, 1.30: "The output OrtValue provided for output 'y' of node ...
         * When calling Run() with pre-allocated output OrtValues ..." */
        "pre-allocated output",
        /* earlier versions: IExecutionFrame's check of a provided output */
        "OrtValue shape verification failed",
        "Shape mismatch attempting to re-use buffer",
    };
    for (size_t i = 0; i < sizeof phrases / sizeof *phrases; i++)
        if (strstr(msg, phrases[i])) return 1;
    return 0;
}

/* One RUN: read the request, run, answer.  CH_OK to go on, else stop. */
static int serve_run(chan *c, onp_session *s)
{
    uint32_t type;
    uint64_t n_in, n_names;
    int r = GET(c, type);
    if (!r && type != MSG_RUN) r = CH_BAD;
    if (!r) r = GET(c, n_in);
    if (r) return r;
    onp_error e;
    onp_error_clear(&e);
    onp_tensor *in = n_in < (1u << 20) ? calloc(n_in ? n_in : 1, sizeof *in) : NULL;
    if (!in) return CH_BAD;
    int skipped = 0; /* an input could not be held here: answer with e, keep going */
    for (uint64_t i = 0; !r && i < n_in; i++) {
        onp_error te;
        r = get_tensor(c, &in[i], 1, &te);
        if (r == CH_SKIP) {
            if (!skipped) e = te;
            skipped = 1;
            r = CH_OK;
        }
    }
    if (!r) r = GET(c, n_names);
    char **names = NULL;
    if (!r && n_names != UINT64_MAX) {
        names = n_names < (1u << 24) ? calloc(n_names ? n_names : 1, sizeof *names) : NULL;
        if (!names) r = CH_BAD;
        for (uint64_t i = 0; !r && i < n_names; i++) r = get_str(c, &names[i]);
    }
    size_t n_out = n_names == UINT64_MAX ? s->n_out : (size_t)n_names;
    onp_tensor *out = NULL;
    if (!r) {
        out = calloc(n_out ? n_out : 1, sizeof *out);
        if (!out) r = CH_BAD;
    }
    out_shm *sh = NULL;
    void **bufs = NULL;
    if (!r && !skipped) {
        sh = calloc(n_out ? n_out : 1, sizeof *sh);
        bufs = calloc(n_out ? n_out : 1, sizeof *bufs);
        if (sh && bufs) out_shm_make(s, in, (size_t)n_in, names, n_out, sh, bufs);
    }
    if (!r) {
        int rc = -1;
        if (!skipped) {
            rc = onp_session_run_into(s, in, (size_t)n_in, (const char *const *)names,
                                      names ? n_out : 0, out, sh && bufs ? bufs : NULL, &e);
            int bound = 0;
            for (size_t i = 0; sh && bufs && i < n_out; i++) bound |= sh[i].fd >= 0;
            /* a failure about a bound output (one not of its declared shape):
             * once more into ORT's own memory; any other failure (a kernel's)
             * would only fail again, so it is answered as it is */
            if (rc && bound && about_bound_output(e.msg)) {
                out_shm_free(sh, n_out);
                onp_error_clear(&e);
                rc = onp_session_run(s, in, (size_t)n_in, (const char *const *)names,
                                     names ? n_out : 0, out, &e);
            }
        }
        int32_t st = rc;
        uint64_t n = n_out;
        r = put_log(c);
        if (!r) r = PUT(c, st);
        if (!r && rc) r = PUT(c, e);
        if (!r && !rc) r = PUT(c, n);
        for (size_t i = 0; !r && !rc && i < n_out; i++) {
            int fd = sh && sh[i].fd >= 0 && out[i].data == sh[i].p && out[i].nbytes == sh[i].n
                         ? sh[i].fd
                         : -1;
            r = put_tensor(c, &out[i], fd, 0, 0);
        }
        if (!r) r = chan_flush(c);
        for (size_t i = 0; !rc && i < n_out; i++) onp_tensor_release(&out[i]);
    }
    out_shm_free(sh, n_out);
    free(sh);
    free(bufs);
    for (uint64_t i = 0; i < n_in; i++) onp_tensor_release(&in[i]);
    for (uint64_t i = 0; names && i < n_names; i++) free(names[i]);
    free(names);
    free(in);
    free(out);
    return r;
}

/* The worker's watchdog: when the parent's end of the socket closes (the
 * parent exited, was killed, or closed the session) the worker ends, even
 * when ORT never returns.  (PR_SET_PDEATHSIG would follow the thread that
 * forked, not the parent process.)  Polling does not consume the data. */
static void *watchdog(void *p)
{
    int fd = *(const int *)p;
    for (;;) {
        struct pollfd q = {.fd = fd, .events = POLLRDHUP};
        if (poll(&q, 1, -1) > 0 && (q.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
            _exit(0);
    }
    return NULL;
}

static void worker_main(onp_worker *w, int fd) __attribute__((noreturn));
static void worker_main(onp_worker *w, int fd)
{
    /* what the parent holds is not ours to count or to report */
    onp_tensor_memory_forget();
    onp_ort_log_take(NULL, 0);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    /* Other sessions' sockets must not stay open here, or their workers
     * would never see their parent's end close. */
    if (fd > 3) close_range(3, (unsigned)fd - 1, 0);
    close_range((unsigned)fd + 1, ~0u, 0);

    static int wfd;
    wfd = fd;
    pthread_t wd;
    if (pthread_create(&wd, NULL, watchdog, &wfd) != 0) _exit(0);

    static chan c; /* 256 KiB: off the stack */
    chan_init(&c, fd, 0);
    onp_error e;
    onp_error_clear(&e);
    onp_session *s = NULL;
    int rc = onp_session_open_local(w->ort, w->path, w->bytes, w->n, w->label, &w->opts, &s, &e);
    if (put_open_reply(&c, s, rc, &e, vm_probe()) == CH_OK && !rc)
        while (serve_run(&c, s) == CH_OK) {
        }
    _exit(0); /* the session goes with the process */
}

// --- the parent's side ---------------------------------------------------------------

/* The worker is gone or must go: kill and reap it, and describe why in e as
 * a failure of `call`. */
static int worker_lost(onp_worker *w, int why, const char *call, onp_error *e)
{
    int err = errno; /* for CH_ERR, before kill/waitpid/close change it */
    int status = 0, reaped = 0;
    pid_t pid = w->pid;
    if (why == CH_EOF) /* it is dying by itself: give it a moment to finish */
        for (int i = 0; i < 200 && !reaped; i++) {
            pid_t got = waitpid(pid, &status, WNOHANG);
            if (got == pid) {
                reaped = 1;
            } else if (got < 0) {
                break;
            } else {
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        }
    if (!reaped) { /* never signal a pid already reaped: it may be another process now */
        kill(pid, SIGKILL);
        reaped = waitpid(pid, &status, 0) == pid;
    }
    if (!reaped || why != CH_EOF) status = -1; /* our own SIGKILL says nothing */
    close(w->fd);
    w->fd = -1;
    w->pid = 0;

    char field[160];
    const char *file = w->label;
    if (why == CH_TIMEOUT) {
        snprintf(field, sizeof field, "%s " LOST_TIMEOUT, call);
        return onp_error_set(e, ONP_ERR_RUNTIME, file, field, -1,
                             "ONNX Runtime did not finish within %d ms; its worker process was "
                             "killed",
                             w->opts.timeout_ms);
    }
    snprintf(field, sizeof field, "%s " LOST_CRASHED, call);
    if (why == CH_BAD)
        return onp_error_set(e, ONP_ERR_RUNTIME, file, field, -1,
                             "the worker process running ONNX Runtime sent a malformed answer "
                             "(or ran out of memory); it was stopped");
    if (status != -1 && WIFSIGNALED(status))
        return onp_error_set(e, ONP_ERR_RUNTIME, file, field, -1,
                             "the worker process running ONNX Runtime died of signal %d (%s)",
                             WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (status != -1 && WIFEXITED(status))
        return onp_error_set(e, ONP_ERR_RUNTIME, file, field, -1,
                             "the worker process running ONNX Runtime exited (status %d) in "
                             "the middle of the call",
                             WEXITSTATUS(status));
    return onp_error_set(e, ONP_ERR_RUNTIME, file, field, -1,
                         "lost the worker process running ONNX Runtime: %s; it was stopped",
                         why == CH_ERR ? strerror(err) : "it is gone");
}

/* Read the worker's log lines into this process's ring. */
static int take_log(chan *c)
{
    char *log;
    int r = get_str(c, &log);
    if (r || !log) return r;
    for (char *line = log, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (*line) onp_ort_log_add(line);
        if (!nl) break;
    }
    free(log);
    return CH_OK;
}

static int get_io(chan *c, onp_session *s, onp_ort_io *io)
{
    int32_t kind, rank;
    char *name;
    int r = get_str(c, &name);
    if (!r) r = GET(c, kind);
    if (!r) r = GET(c, io->dtype);
    if (!r) r = GET(c, rank);
    if (!r && (rank < 0 || rank > ONP_MAX_RANK)) r = CH_BAD;
    if (!r) {
        io->kind = kind;
        io->rank = rank;
        io->name = name ? onp_arena_strndup(&s->arena, name, strlen(name)) : "";
        if (!io->name) r = CH_BAD;
    }
    free(name);
    for (int d = 0; !r && d < rank; d++) {
        char *dn = NULL;
        r = GET(c, io->dims[d]);
        if (!r) r = get_str(c, &dn);
        if (!r && dn) {
            io->dim_names[d] = onp_arena_strndup(&s->arena, dn, strlen(dn));
            if (!io->dim_names[d]) r = CH_BAD;
        }
        if (!r && !dn) io->dim_names[d] = NULL;
        free(dn);
    }
    return r;
}

/* The worker's answer to its open, into s. */
static int get_open_reply(chan *c, onp_session *s, onp_error *e, int *failed, int32_t *vm)
{
    int32_t st;
    int r = take_log(c);
    if (!r) r = GET(c, st);
    if (r) return r;
    if (st) {
        *failed = 1;
        return GET(c, *e);
    }
    char *prov, *notes;
    int32_t level, intra, inter, det;
    uint64_t n_in, n_out, n_init;
    if ((r = get_str(c, &prov))) return r;
    if ((r = get_str(c, &notes))) {
        free(prov);
        return r;
    }
    s->desc.provider = onp_arena_strndup(&s->arena, prov ? prov : "", prov ? strlen(prov) : 0);
    s->desc.notes = onp_arena_strndup(&s->arena, notes ? notes : "", notes ? strlen(notes) : 0);
    free(prov);
    free(notes);
    if (!s->desc.provider || !s->desc.notes) return CH_BAD;
    r = GET(c, level);
    if (!r) r = GET(c, intra);
    if (!r) r = GET(c, inter);
    if (!r) r = GET(c, det);
    if (!r) r = GET(c, *vm);
    if (!r) r = GET(c, n_in);
    if (!r) r = GET(c, n_out);
    if (!r) r = GET(c, n_init);
    if (r) return r;
    if (n_in > (1u << 24) || n_out > (1u << 24) || n_init > (1u << 24)) return CH_BAD;
    s->desc.opt_level = (onp_ort_opt_level)level;
    s->desc.intra_threads = intra;
    s->desc.inter_threads = inter;
    s->desc.deterministic = det;
    s->n_in = (size_t)n_in;
    s->n_out = (size_t)n_out;
    s->n_init = (size_t)n_init;
    s->in = onp_arena_array(&s->arena, s->n_in, sizeof *s->in);
    s->out = onp_arena_array(&s->arena, s->n_out, sizeof *s->out);
    s->init = onp_arena_array(&s->arena, s->n_init, sizeof *s->init);
    if (!s->in || !s->out || !s->init) return CH_BAD;
    for (size_t i = 0; !r && i < s->n_in; i++) r = get_io(c, s, &s->in[i]);
    for (size_t i = 0; !r && i < s->n_out; i++) r = get_io(c, s, &s->out[i]);
    for (size_t i = 0; !r && i < s->n_init; i++) r = get_io(c, s, &s->init[i]);
    return r;
}

/* Fork a worker and read its open reply.  With `s` (the first start) the
 * reply fills the session; on a restart (s == NULL) it is only checked.
 * 0, or -1 with e set (the worker's own open error, or why it was lost). */
static int worker_start(onp_worker *w, onp_session *s, onp_error *e)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return onp_error_set(e, ONP_ERR_RUNTIME, w->label, "socketpair", -1,
                             "cannot make a socket for the worker process: %s", strerror(errno));
    /* never on 0..2, where a stray write to stdio would join the protocol */
    for (int k = 0; k < 2; k++)
        if (sv[k] < 3) {
            int moved = fcntl(sv[k], F_DUPFD_CLOEXEC, 3);
            if (moved >= 0) {
                close(sv[k]);
                sv[k] = moved;
            }
        }
    fflush(NULL); /* nothing buffered here may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(sv[0]);
        close(sv[1]);
        return onp_error_set(e, ONP_ERR_RUNTIME, w->label, "fork", -1,
                             "cannot start the worker process: %s", strerror(err));
    }
    if (pid == 0) {
        close(sv[0]);
        worker_main(w, sv[1]);
    }
    close(sv[1]);
    w->pid = pid;
    w->fd = sv[0];
    /* While the worker loads the model and creates its session, this
     * process would wait idle: hash the library file now (the report's
     * environment.ort_library_sha256; issue 34), on the core the worker
     * does not use.  A failure is left for the report to meet and say. */
    onp_error he;
    char hex[65];
    (void)onp_ort_lib_sha256(w->ort, hex, &he);

    chan *c = malloc(sizeof *c);
    if (!c) return worker_lost(w, CH_BAD, "CreateSession", e);
    chan_init(c, w->fd, w->opts.timeout_ms ? now_ms() + w->opts.timeout_ms : 0);
    onp_session tmp;
    memset(&tmp, 0, sizeof tmp);
    onp_session *into = s ? s : &tmp;
    int failed = 0;
    int32_t vm = 0;
    int r = get_open_reply(c, into, e, &failed, &vm);
    w->vm_read = vm == 1;
    chan_drop_fds(c);
    free(c);
    if (!s) onp_arena_free(&tmp.arena); /* a restart's reply, only checked */
    /* the session's name indexes, once, when the reply fills it (a
     * restart's scratch copy needs none) */
    if (!r && !failed && s && onp_session_index_names(s)) r = CH_BAD;
    if (r) return worker_lost(w, r, "CreateSession", e);
    if (failed) { /* ORT refused: the worker has exited by itself */
        int status;
        close(w->fd);
        w->fd = -1;
        waitpid(w->pid, &status, 0);
        w->pid = 0;
        return -1;
    }
    return 0;
}

static const char *arena_dup(onp_arena *a, const char *s, int *bad)
{
    if (!s) return NULL;
    const char *d = onp_arena_strndup(a, s, strlen(s));
    if (!d) *bad = 1;
    return d;
}

static const char *const *arena_dup_list(onp_arena *a, const char *const *v, size_t n, int *bad)
{
    if (!n) return NULL;
    const char **d = onp_arena_array(a, n, sizeof *d);
    if (!d) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) d[i] = arena_dup(a, v[i], bad);
    return d;
}

void onp_worker_free(onp_worker *w)
{
    if (!w) return;
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
    }
    if (w->fd >= 0) close(w->fd);
    pthread_mutex_destroy(&w->mu);
    onp_ort_unref(w->ort);
    free(w->path);
    free(w->bytes);
    free(w->label);
    onp_arena_free(&w->arena);
    free(w);
}

int onp_worker_open(onp_ort *ort, const char *path, const void *bytes, size_t n, const char *label,
                    const onp_session_opts *o, onp_session **out, onp_error *e)
{
    *out = NULL;
    onp_worker *w = calloc(1, sizeof *w);
    onp_session *s = calloc(1, sizeof *s);
    if (!w || !s) {
        free(w);
        free(s);
        return onp_error_set(e, ONP_ERR_NOMEM, label, NULL, -1, "out of memory");
    }
    w->fd = -1;
    pthread_mutex_init(&w->mu, NULL);
    onp_ort_ref(ort);
    w->ort = ort;
    s->worker = w;
    onp_ort_ref(ort);
    s->ort = ort;

    int bad = 0;
    w->label = strdup(label);
    if (path) {
        w->path = strdup(path);
        bad |= !w->path;
    } else {
        w->bytes = malloc(n ? n : 1);
        if (w->bytes && n) memcpy(w->bytes, bytes, n);
        w->n = n;
        bad |= !w->bytes;
    }
    w->opts = *o;
    w->opts.isolate = 0;
    w->opts.provider = arena_dup(&w->arena, o->provider, &bad);
    w->opts.provider_opts = arena_dup_list(&w->arena, o->provider_opts, o->n_provider_opts, &bad);
    w->opts.config = arena_dup_list(&w->arena, o->config, o->n_config, &bad);
    w->opts.optimized_model_path = arena_dup(&w->arena, o->optimized_model_path, &bad);
    w->opts.custom_op_libs =
        arena_dup_list(&w->arena, o->custom_op_libs, o->n_custom_op_libs, &bad);
    s->desc.model = arena_dup(&s->arena, label, &bad);
    if (bad || !w->label) {
        onp_session_close(s);
        return onp_error_set(e, ONP_ERR_NOMEM, label, NULL, -1, "out of memory");
    }
    if (worker_start(w, s, e)) {
        onp_session_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* Send one RUN and read its answer into outputs[n_out].  CH_* on a lost
 * channel; else 0 (success) or -1 with e set: the worker's error, or an
 * output this process could not hold (the memory cap), read and dropped
 * so that the worker stays usable. */
static int call_run(chan *c, const onp_tensor *inputs, size_t n_inputs,
                    const char *const *output_names, size_t n_out, int fetch_all, int vm_read,
                    onp_tensor *outputs, onp_error *e)
{
    uint32_t type = MSG_RUN;
    uint64_t n_in = n_inputs, n_names = fetch_all ? UINT64_MAX : n_out;
    int r = PUT(c, type);
    if (!r) r = PUT(c, n_in);
    for (size_t i = 0; !r && i < n_inputs; i++) r = put_tensor(c, &inputs[i], -1, vm_read, 1);
    if (!r) r = PUT(c, n_names);
    for (size_t i = 0; !r && !fetch_all && i < n_out; i++) r = put_str(c, output_names[i]);
    if (!r) r = chan_flush(c);
    int32_t st;
    if (!r) r = take_log(c);
    if (!r) r = GET(c, st);
    if (r) return r;
    if (st) {
        r = GET(c, *e);
        return r ? r : -1;
    }
    uint64_t n;
    if ((r = GET(c, n))) return r;
    if (n != n_out) return CH_BAD;
    int skipped = 0;
    for (size_t i = 0; !r && i < n_out; i++) {
        onp_error oe;
        r = get_tensor(c, &outputs[i], 0, &oe);
        if (r == CH_SKIP) {
            if (!skipped) *e = oe;
            skipped = 1;
            r = CH_OK;
        }
    }
    return r ? r : skipped ? -1 : CH_OK;
}

int onp_worker_run(onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                   const char *const *output_names, size_t n_outputs, onp_tensor *outputs,
                   onp_error *e)
{
    onp_worker *w = s->worker;
    const char *file = s->desc.model;
    int fetch_all = !output_names;
    size_t n_out = fetch_all ? s->n_out : n_outputs;
    for (size_t i = 0; !fetch_all && i < n_out; i++)
        if (!output_names[i])
            return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1, "output name %zu is NULL", i);

    pthread_mutex_lock(&w->mu);
    int rc = 0;
    if (!w->pid) rc = worker_start(w, NULL, e); /* the last one crashed or timed out */
    chan *c = rc ? NULL : malloc(sizeof *c);
    if (!rc && !c) rc = onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    if (!rc) {
        chan_init(c, w->fd, w->opts.timeout_ms ? now_ms() + w->opts.timeout_ms : 0);
        int r =
            call_run(c, inputs, n_inputs, output_names, n_out, fetch_all, w->vm_read, outputs, e);
        if (r == -1)
            rc = -1;
        else if (r != CH_OK) /* the stream is out of step: this worker is done */
            rc = worker_lost(w, r, "Run", e);
        chan_drop_fds(c);
    }
    free(c);
    pthread_mutex_unlock(&w->mu);
    if (rc)
        for (size_t i = 0; i < n_out; i++) onp_tensor_release(&outputs[i]);
    return rc;
}
