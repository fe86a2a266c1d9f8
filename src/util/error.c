/*
 * error.c — filling and formatting onp_error (include/onnxparity/error.h).
 * Depends on nothing but libc.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/error.h"

static void copy_str(char *dst, size_t n, const char *src)
{
    if (!src) src = "";
    size_t k = strlen(src);
    if (k >= n) k = n - 1;
    memcpy(dst, src, k);
    dst[k] = '\0';
}

void onp_error_clear(onp_error *e)
{
    if (!e) return;
    e->code = ONP_ERR_NONE;
    e->offset = -1;
    e->file[0] = e->field[0] = e->msg[0] = '\0';
}

int onp_error_set(onp_error *e, onp_errcode code, const char *file, const char *field,
                  int64_t offset, const char *fmt, ...)
{
    if (!e) return -1;
    e->code = code;
    e->offset = offset;
    copy_str(e->file, sizeof e->file, file);
    copy_str(e->field, sizeof e->field, field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    /* One line, always: messages may quote names from files. */
    for (char *p = e->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

int onp_error_field_prefix(onp_error *e, const char *prefix)
{
    if (!e || !prefix || !*prefix) return -1;
    char tmp[2 * sizeof e->field + 2];
    if (e->field[0])
        snprintf(tmp, sizeof tmp, "%s.%s", prefix, e->field);
    else
        snprintf(tmp, sizeof tmp, "%s", prefix);
    size_t n = strlen(tmp), cap = sizeof e->field - 1;
    if (n > cap) { /* deep paths: keep the head and the tail, elide the middle */
        size_t head = 48, tail = cap - head - 3;
        memmove(tmp + head + 3, tmp + n - tail, tail + 1);
        memcpy(tmp + head, "...", 3);
    }
    copy_str(e->field, sizeof e->field, tmp);
    return -1;
}

int onp_error_set_file(onp_error *e, const char *file)
{
    if (e && !e->file[0]) copy_str(e->file, sizeof e->file, file);
    return -1;
}

char *onp_error_format(const onp_error *e, char *buf, size_t n)
{
    if (!n) return buf;
    size_t k = 0;
    buf[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (k < n) {                                                                               \
            int w_ = snprintf(buf + k, n - k, __VA_ARGS__);                                        \
            if (w_ > 0) k += (size_t)w_;                                                           \
        }                                                                                          \
    } while (0)
    if (e->file[0]) PUT("%s: ", e->file);
    if (e->field[0]) PUT("%s", e->field);
    if (e->offset >= 0) PUT("%sat byte %lld", e->field[0] ? " " : "", (long long)e->offset);
    if (e->field[0] || e->offset >= 0) PUT(": ");
    PUT("%s", e->msg[0] ? e->msg : onp_errcode_name(e->code));
#undef PUT
    /* One line a terminal shows as it is: file names and fields may come
     * from files too (an output name in a criteria file, a member name). */
    for (char *p = buf; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '\n' || ch == '\r' || ch == '\t')
            *p = ' ';
        else if (ch < 0x20 || ch == 0x7f)
            *p = '?';
    }
    return buf;
}

int onp_error_exit_code(const onp_error *e)
{
    switch (e->code) {
    case ONP_ERR_USAGE:
    case ONP_ERR_INPUT: return 2;
    case ONP_ERR_RUNTIME: return 4;
    case ONP_ERR_NONE: return 0;
    default: return 3;
    }
}

static const char *const code_names[] = {
    [ONP_ERR_NONE] = "none",       [ONP_ERR_USAGE] = "usage",   [ONP_ERR_INPUT] = "input",
    [ONP_ERR_IO] = "io",           [ONP_ERR_FORMAT] = "format", [ONP_ERR_NOMEM] = "nomem",
    [ONP_ERR_RUNTIME] = "runtime",
};
_Static_assert(sizeof code_names / sizeof code_names[0] == ONP_ERR_COUNT,
               "code_names must list every onp_errcode");

const char *onp_errcode_name(onp_errcode code)
{
    return (unsigned)code < ONP_ERR_COUNT ? code_names[code] : "?";
}
