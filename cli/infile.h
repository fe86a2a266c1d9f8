/*
 * infile.h — open a document for reading, regular files only.  Shared by
 * the commands that read JSON documents (gate's criteria, report, merge);
 * kept apart from report.c so that the criteria fuzzer can link it alone.
 */
#ifndef ONP_CLI_INFILE_H
#define ONP_CLI_INFILE_H

#include <stdio.h>

#include "onnxparity/buf.h"
#include "onnxparity/error.h"

/* The whole of a regular file into b: the library's onp_read_regular
 * (src/util/fsio.h; a FIFO never blocks the open, a folder or a device is
 * refused with ONP_ERR_IO naming the file). */
int cli_read_file(const char *path, size_t cap, const char *what, onp_buf *b, onp_error *e);

/* A JSON document from a regular file (up to 1 GiB), read strictly
 * (onp_json_parse: one value, no duplicate keys, no NUL in strings); NULL
 * with e set, and `bad_code` / "`bad_msg`: reason" (at the byte offset where
 * parsing stopped) when it is refused.  The caller owns the result
 * (cJSON_Delete). */
struct cJSON *cli_read_json(const char *path, onp_errcode bad_code, const char *bad_msg,
                            onp_error *e);

#endif
