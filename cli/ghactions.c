/*
 * ghactions.c — GitHub Actions workflow commands and Markdown summaries
 * (ghactions.h).  stdio only; no knowledge of ONNX Runtime.
 */
#include "ghactions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "onnxparity/buf.h"
#include "onnxparity/outpath.h"

static void escape(FILE *to, const char *s, int property)
{
    for (; s && *s; s++) {
        if (*s == '%')
            fputs("%25", to);
        else if (*s == '\r')
            fputs("%0D", to);
        else if (*s == '\n')
            fputs("%0A", to);
        else if (property && *s == ':')
            fputs("%3A", to);
        else if (property && *s == ',')
            fputs("%2C", to);
        else
            fputc(*s, to);
    }
}

void gh_command(FILE *to, const char *level, const char *file, const char *title,
                const char *message)
{
    fprintf(to, "::%s ", level);
    if (file) {
        fputs("file=", to);
        escape(to, file, 1);
        fputc(',', to);
    }
    fputs("title=", to);
    escape(to, title, 1);
    fputs("::", to);
    escape(to, message, 0);
    fputc('\n', to);
}

void gh_causes_commands(FILE *to, const onp_causes *cs, const char *model)
{
    for (size_t i = 0; cs && i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        char title[400], msg[2000];
        snprintf(title, sizeof title, "onnxparity cause: %s (%s confidence)%s%s",
                 onp_cause_name(c->id), onp_confidence_name(c->confidence),
                 c->node[0] ? " at " : "", c->node);
        snprintf(msg, sizeof msg, "%s\nfix: %s", c->n_evidence ? c->evidence[0] : "", c->fix);
        gh_command(to, "error", model, title, msg);
    }
}

void gh_md_text(FILE *to, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", to);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', to);
        else if (*s == '<')
            fputs("&lt;", to);
        else
            fputc(*s, to);
    }
}

void gh_md_causes(FILE *to, const onp_causes *cs)
{
    if (!cs || !cs->n) return;
    fputs("\n**Causes**, most likely first:\n\n", to);
    for (size_t i = 0; i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        fprintf(to, "- **%s** (%s confidence)", onp_cause_name(c->id),
                onp_confidence_name(c->confidence));
        if (c->node[0]) {
            fputs(" at `", to);
            gh_md_text(to, c->node);
            fputc('`', to);
        }
        fputs(": ", to);
        gh_md_text(to, c->n_evidence ? c->evidence[0] : "");
        fputs(" — fix: ", to);
        gh_md_text(to, c->fix);
        fputc('\n', to);
    }
}

// --- the summary file ------------------------------------------------------------
//
// The stream gh_summary_open returns collects the summary in memory
// (fopencookie); its close appends the whole of it with write(2) on a
// descriptor opened O_APPEND, so that the writers stay plain stdio and
// every failure (the open, a write, the close) is seen in one place and
// said in one line.  Why not fopen(path, "a"): it waits forever in open()
// on a FIFO nobody reads, and its buffered writes fail only at fclose,
// which the callers could only turn into a silent exit 3.

#define SUMMARY_MAX (16u << 20) /* bytes: a summary has at most 100 rows */

typedef struct summary_sink {
    char path[4096]; /* as given, for the message */
    int fd;          /* opened O_APPEND, blocking again after the open */
    int regular;     /* a regular file: a failed append is undone */
    onp_buf text;    /* the summary so far */
} summary_sink;

/* One line naming the file: "onnxparity: PATH: cannot append the summary:
 * WHY (nothing appended)". */
static int sink_fail(const summary_sink *s, onp_errcode code, const char *why, int undone)
{
    onp_error e;
    onp_error_set(&e, code, s->path, NULL, -1, "cannot append the summary: %s%s", why,
                  undone ? " (nothing appended)" : "");
    return cli_report(&e);
}

/* stdio's write hook: into memory.  0 (an error for stdio) past the cap. */
static ssize_t sink_write(void *cookie, const char *p, size_t n)
{
    summary_sink *s = cookie;
    return onp_buf_append(&s->text, p, n) ? 0 : (ssize_t)n;
}

/* All n bytes onto s->fd; 0, or -1 with errno.  When a regular file took
 * part of the text before failing (a full disk, a size limit), the part is
 * cut off again, so the file ends as it began (*undone set), unless
 * another writer appended since. */
static int append_all(summary_sink *s, const uint8_t *p, size_t n, int *undone)
{
    size_t done = 0;
    off_t start = -1;
    *undone = 1;
    while (done < n) {
        ssize_t w = write(s->fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int err = w < 0 ? errno : EIO;
            struct stat st;
            off_t end = done ? lseek(s->fd, 0, SEEK_CUR) : -1;
            if (done && !(s->regular && start >= 0 && end >= 0 && !fstat(s->fd, &st) &&
                          st.st_size == end && !ftruncate(s->fd, start)))
                *undone = 0;
            errno = err;
            return -1;
        }
        if (!done && s->regular) {
            off_t end = lseek(s->fd, 0, SEEK_CUR); /* O_APPEND: where this write ended */
            start = end >= w ? end - w : -1;
        }
        done += (size_t)w;
    }
    return 0;
}

/* stdio's close hook (fclose): the append, then close(2); one line and -1
 * when either fails or the text could not be held. */
static int sink_close(void *cookie)
{
    summary_sink *s = cookie;
    int rc = 0, undone = 1;
    if (s->text.failed) {
        rc = sink_fail(s, ONP_ERR_NOMEM, "the summary passed 16 MiB or memory ran out", 1);
    } else if (append_all(s, s->text.p, s->text.n, &undone)) {
        rc = sink_fail(s, ONP_ERR_IO, strerror(errno), undone);
    }
    if (close(s->fd) && !rc) rc = sink_fail(s, ONP_ERR_IO, strerror(errno), 0);
    onp_buf_free(&s->text);
    free(s);
    return rc ? -1 : 0;
}

int gh_summary_open(const char *path, FILE **out)
{
    onp_error e;
    onp_error_clear(&e);
    *out = NULL;
    if (onp_out_check(path, &e)) return cli_report(&e);
    /* O_NONBLOCK: a FIFO with no reader fails (ENXIO) instead of waiting */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) {
        int err = errno;
        onp_error_set(&e, ONP_ERR_IO, path, NULL, -1, "cannot open for appending: %s",
                      err == ENXIO ? "a FIFO that no process reads (nothing appended)"
                                   : strerror(err));
        return cli_report(&e);
    }
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    onp_errcode code = ONP_ERR_NONE;
    const char *why = NULL;
    if (fstat(fd, &st) || flags < 0)
        code = ONP_ERR_IO, why = strerror(errno);
    else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
        code = ONP_ERR_USAGE, why = "is not a regular file, a character device or a FIFO";
    else if (fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)) /* then written as stdout is */
        code = ONP_ERR_IO, why = strerror(errno);
    summary_sink *s = why ? NULL : calloc(1, sizeof *s);
    if (s) {
        snprintf(s->path, sizeof s->path, "%s", path);
        s->fd = fd;
        s->regular = S_ISREG(st.st_mode);
        onp_buf_init(&s->text, SUMMARY_MAX);
        *out = fopencookie(s, "w", (cookie_io_functions_t){NULL, sink_write, NULL, sink_close});
        if (*out) return 0;
        free(s);
    }
    close(fd);
    if (!why) code = ONP_ERR_NOMEM, why = "out of memory";
    onp_error_set(&e, code, path, NULL, -1, "%s", why);
    return cli_report(&e);
}
