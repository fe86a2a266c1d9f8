/*
 * infile.c — opening the documents the tool reads itself (criteria files,
 * result documents for report and merge): regular files only, noted as read
 * so that no output replaces them, JSON read strictly (infile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "infile.h"
#include "onnxparity/json.h"
#include "onnxparity/outpath.h"

FILE *cli_fopen_regular(const char *path, onp_error *e)
{
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st))
        why = "cannot stat";
    else if (S_ISDIR(st.st_mode))
        why = "is a folder, not a file";
    else if (!S_ISREG(st.st_mode))
        why = "is not a regular file";
    FILE *f = NULL;
    if (!why) {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) || !(f = fdopen(fd, "rb")))
            why = "cannot open";
    }
    if (!f) {
        close(fd);
        onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "%s", why);
    } else {
        onp_out_note_read(path); /* no output of this command may replace it */
    }
    return f;
}

int cli_read_file(const char *path, size_t cap, const char *what, onp_buf *b, onp_error *e)
{
    onp_buf_init(b, cap);
    FILE *f = cli_fopen_regular(path, e);
    if (!f) return -1;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) onp_buf_append(b, chunk, n);
    int bad = ferror(f) || b->failed;
    fclose(f);
    if (bad) return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot read%s", what);
    return 0;
}

cJSON *cli_read_json(const char *path, onp_errcode bad_code, const char *bad_msg, onp_error *e)
{
    onp_buf b;
    if (cli_read_file(path, 1u << 30, "", &b, e)) {
        onp_buf_free(&b);
        return NULL;
    }
    cJSON *doc = onp_json_parse(b.p, b.n, path, bad_code, bad_msg, e);
    onp_buf_free(&b);
    return doc;
}
