/*
 * infile.h — open a document for reading, regular files only.  Shared by
 * the commands that read JSON documents (gate's criteria, report, merge);
 * kept apart from report.c so that the criteria fuzzer can link it alone.
 */
#ifndef ONP_CLI_INFILE_H
#define ONP_CLI_INFILE_H

#include <stdio.h>

#include "onnxparity/error.h"

/* Open `path` for reading when it is a regular file (a FIFO never blocks
 * the open; a folder or a device is refused: ONP_ERR_IO), else NULL with
 * `e` naming the file. */
FILE *cli_fopen_regular(const char *path, onp_error *e);

#endif
