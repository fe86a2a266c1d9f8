/*
 * infile.c — opening the documents the tool reads itself (criteria files,
 * result documents for report and merge): regular files only (infile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"

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
    }
    return f;
}
