/*
 * error.h — how libonnxparity reports failure.
 *
 * Every fallible function returns 0 on success and -1 on failure, and fills
 * the caller's onp_error (never global state).  The error names the file, the
 * field (e.g. "TensorProto.raw_data", "graph.node[3]") and the byte offset
 * where known, so the CLI can print one line a user can act on.  Library code
 * never exits or aborts on input; only the CLI maps codes to exit statuses.
 */
#ifndef ONNXPARITY_ERROR_H
#define ONNXPARITY_ERROR_H

#include <stddef.h>
#include <stdint.h>

/* Error kinds.  onp_error_exit_code() maps them onto the documented exit
 * codes (docs/cli.md): 2 usage or bad input, 3 I/O or format, 4 runtime. */
typedef enum onp_errcode {
    ONP_ERR_NONE = 0,
    ONP_ERR_USAGE,   /* bad flags, bad names, a request that cannot be met  (exit 2) */
    ONP_ERR_INPUT,   /* input refused by policy: unsafe path, object dtype, cap (exit 2) */
    ONP_ERR_IO,      /* a file could not be opened, read, mapped or written (exit 3) */
    ONP_ERR_FORMAT,  /* bytes that do not decode as the format they claim   (exit 3) */
    ONP_ERR_NOMEM,   /* an allocation failed                                 (exit 3) */
    ONP_ERR_RUNTIME, /* ONNX Runtime failed                                  (exit 4) */
    ONP_ERR_COUNT
} onp_errcode;

typedef struct onp_error {
    onp_errcode code;
    int64_t offset;  /* byte offset in `file`, -1 when unknown */
    char file[512];  /* the file concerned, "" when none */
    char field[160]; /* the field or element concerned, "" when none */
    char msg[768];   /* what is wrong, one line */
} onp_error;

/* Reset to "no error". */
void onp_error_clear(onp_error *e);

/* Fill `e` (which may be NULL) and return -1, so callers can write
 * `return onp_error_set(...)`.  `file` and `field` may be NULL. */
int onp_error_set(onp_error *e, onp_errcode code, const char *file, const char *field,
                  int64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* Prefix the field with a context path ("graph.node[3]" + "." + old field),
 * keeping the rest.  Returns -1 for chaining. */
int onp_error_field_prefix(onp_error *e, const char *prefix);

/* Set `file` if it is still empty.  Returns -1 for chaining. */
int onp_error_set_file(onp_error *e, const char *file);

/* One line: "FILE: FIELD at byte N: MESSAGE" (parts omitted when unknown);
 * newlines, CR and tabs become spaces, other control characters '?'.
 * Writes at most n bytes including the NUL; returns `buf`. */
char *onp_error_format(const onp_error *e, char *buf, size_t n);

/* The CLI exit code for an error kind (2, 3 or 4). */
int onp_error_exit_code(const onp_error *e);

/* A stable lower-case name for the kind ("usage", "format", ...). */
const char *onp_errcode_name(onp_errcode code);

#endif
