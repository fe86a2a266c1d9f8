/*
 * npy.c — numpy .npy reader and writer (include/onnxparity/tfile.h).
 *
 * A .npy file is the magic "\x93NUMPY", a version byte pair (1.0, 2.0 or
 * 3.0), a little-endian header length (2 bytes in 1.0, 4 in 2.0/3.0), a
 * Python-literal dict {'descr': ..., 'fortran_order': ..., 'shape': (...)}
 * padded with spaces so the data starts on a 64-byte boundary and ended by
 * '\n', then the raw elements.  The dict is parsed here by a strict cursor
 * parser over the bytes in place, never evaluated; every size it implies is
 * checked against the bytes present before anything is allocated.  Object
 * (pickled) arrays are never loaded.  Strings: 'S<n>' is read byte for byte
 * with trailing NULs stripped, 'U<n>' is UTF-32 turned into UTF-8.
 *
 * The decoded tensor is C order in host byte order; fortran_order arrays are
 * transposed on read and big-endian ones swapped.  The writer reproduces
 * numpy's own header layout byte for byte.  Depends on tensor, dtype, util.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/tfile.h"
#include "tfile/npy_int.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64             /* numpy aligns the data to this many bytes */
#define NPY_GROWTH_DIGITS 21     /* numpy leaves room for a dim this wide */
#define NPY_ITEM_MAX 0x7fffffffu /* numpy itemsizes are C ints */
#define NPY_DEFAULT_MAX ((uint64_t)16 << 30)
#define NPY_HDR_MAX 2048 /* the longest header the writer can produce */

// --- byte order -----------------------------------------------------------

static int host_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* Reverse the bytes of each `unit`-byte group of p[n]. */
static void swap_units(uint8_t *p, size_t n, size_t unit)
{
    if (unit < 2) return;
    for (size_t i = 0; i + unit <= n; i += unit)
        for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

static uint32_t load_u32(const uint8_t *p, int swap)
{
    uint8_t b[4];
    uint32_t v;
    memcpy(b, p, 4);
    if (swap) swap_units(b, 4, 4);
    memcpy(&v, b, 4);
    return v;
}

static size_t max_bytes_of(const onp_tread_opts *ro)
{
    if (ro && ro->max_bytes) return ro->max_bytes;
    return NPY_DEFAULT_MAX < SIZE_MAX ? (size_t)NPY_DEFAULT_MAX : SIZE_MAX;
}

// --- Fortran-order walk ----------------------------------------------------

/* Visits the elements of a shape in Fortran order (first axis fastest) and
 * gives the C-order index of each; only for shapes with at least one element. */
typedef struct forder {
    int rank;
    const int64_t *dims;         /* [rank] */
    int64_t idx[ONP_MAX_RANK];   /* [rank] current multi-index */
    size_t stride[ONP_MAX_RANK]; /* [rank] C-order strides, in elements */
    size_t pos;                  /* C-order index of the current element */
} forder;

static void forder_init(forder *f, int rank, const int64_t *dims)
{
    size_t s = 1;
    f->rank = rank;
    f->dims = dims;
    f->pos = 0;
    for (int d = rank - 1; d >= 0; d--) {
        f->idx[d] = 0;
        f->stride[d] = s;
        s *= (size_t)dims[d];
    }
}

static void forder_next(forder *f)
{
    for (int d = 0; d < f->rank; d++) {
        f->pos += f->stride[d];
        if (++f->idx[d] < f->dims[d]) return;
        f->pos -= f->stride[d] * (size_t)f->dims[d];
        f->idx[d] = 0;
    }
}

// --- header: types ---------------------------------------------------------

typedef enum npy_kind { NPY_NUM, NPY_BYTES, NPY_UNICODE } npy_kind;

typedef struct npy_type {
    npy_kind kind;
    int32_t dtype;   /* onp_dtype of the decoded tensor */
    size_t itemsize; /* bytes per element in the file */
    size_t unit;     /* bytes per swapped unit: element, complex half, UTF-32 char */
    int swap;        /* the file's byte order differs from the host's */
} npy_type;

typedef struct npy_header {
    npy_type type;
    int fortran;
    int rank;
    int64_t dims[ONP_MAX_RANK]; /* [rank] */
} npy_header;

/* Cursor over the header dict; advances only past what it accepted. */
typedef struct cursor {
    const uint8_t *p; /* [n] header bytes */
    size_t n, i;
    int64_t base; /* file offset of p[0] */
    int long_ok;  /* accept Python 2 "3L" integers (versions 1.0 and 2.0) */
    const char *file;
    onp_error *e;
} cursor;

static int64_t cur_off(const cursor *c)
{
    return c->base + (int64_t)c->i;
}

static int fail_at(cursor *c, onp_errcode code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail_at(cursor *c, onp_errcode code, const char *field, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return onp_error_set(c->e, code, c->file, field, cur_off(c), "%s", msg);
}

static int syntax(cursor *c, const char *what)
{
    return fail_at(c, ONP_ERR_FORMAT, "npy.header", "header dict: %s", what);
}

static int peek(cursor *c)
{
    while (c->i < c->n &&
           (c->p[c->i] == ' ' || c->p[c->i] == '\t' || c->p[c->i] == '\n' || c->p[c->i] == '\r'))
        c->i++;
    return c->i < c->n ? c->p[c->i] : -1;
}

static int expect(cursor *c, int ch, const char *what)
{
    if (peek(c) != ch) return syntax(c, what);
    c->i++;
    return 0;
}

static int is_digit(int ch)
{
    return ch >= '0' && ch <= '9';
}

/* A quoted string without escapes or prefixes: bytes p[*at, *at + *len). */
static int parse_str(cursor *c, size_t *at, size_t *len)
{
    int q = peek(c);
    if (q != '\'' && q != '"') return syntax(c, "expected a quoted string");
    size_t open = c->i++;
    while (c->i < c->n && c->p[c->i] != q) {
        uint8_t ch = c->p[c->i];
        if (ch == '\\' || ch == '\n' || ch == '\r')
            return syntax(c, "escapes and line breaks are not allowed in strings");
        c->i++;
    }
    if (c->i >= c->n) {
        c->i = open;
        return syntax(c, "unterminated string");
    }
    *at = open + 1;
    *len = c->i - open - 1;
    c->i++;
    return 0;
}

/* Decimal digits at s[*i..n) into *v (at most `max`); no leading zeros. */
static int parse_decimal(const uint8_t *s, size_t n, size_t *i, uint64_t max, uint64_t *v)
{
    size_t k = *i;
    uint64_t acc = 0;
    if (k >= n || !is_digit(s[k])) return -1;
    if (s[k] == '0' && k + 1 < n && is_digit(s[k + 1])) return -1;
    for (; k < n && is_digit(s[k]); k++) {
        uint64_t d = (uint64_t)(s[k] - '0');
        if (acc > (max - d) / 10) return -1;
        acc = acc * 10 + d;
    }
    *i = k;
    *v = acc;
    return 0;
}

// --- header: values ----------------------------------------------------------

/* Header text quoted in messages: at most 40 bytes, printable ASCII as it
 * is, anything else (a NUL included, which would end a "%.*s") as \xNN. */
static const char *shown(const uint8_t *s, size_t n, char *buf, size_t bn)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < 40 && k + 5 < bn; i++)
        if (s[i] >= 0x20 && s[i] < 0x7f)
            buf[k++] = (char)s[i];
        else
            k += (size_t)snprintf(buf + k, bn - k, "\\x%02x", s[i]);
    buf[k] = '\0';
    return buf;
}

/* Fill t from a descr such as "<f4", ">c16", "|S10", "<U5". */
static int resolve_descr(cursor *c, const uint8_t *s, size_t n, npy_type *t)
{
    const char *F = "npy.header.descr";
    char sb[200];
    size_t i = 0;
    int order = '=';
    if (n && memchr("<>|=", s[0], 4)) order = s[i++];
    if (i < n && s[i] == 'O')
        return fail_at(c, ONP_ERR_INPUT, F, "object/pickled arrays are never loaded");
    uint64_t size = 0;
    size_t j = i + 1;
    if (n > 16 || i >= n || parse_decimal(s, n, &j, NPY_ITEM_MAX, &size) || j != n)
        return fail_at(c, ONP_ERR_INPUT, F, "unsupported dtype '%s'", shown(s, n, sb, sizeof sb));
    /* from here on n <= 16 */
    int host_big = host_big_endian();
    int big = order == '>' ? 1 : order == '<' ? 0 : host_big;
    memset(t, 0, sizeof *t);
    if (s[i] == 'S' || s[i] == 'U') {
        if (size == 0) return fail_at(c, ONP_ERR_FORMAT, F, "zero-length string dtype");
        if (s[i] == 'U' && size > NPY_ITEM_MAX / 4)
            return fail_at(c, ONP_ERR_FORMAT, F, "string dtype too long");
        t->kind = s[i] == 'S' ? NPY_BYTES : NPY_UNICODE;
        t->dtype = ONP_STRING;
        t->unit = s[i] == 'S' ? 1 : 4;
        t->itemsize = (size_t)size * t->unit;
        t->swap = t->unit > 1 && big != host_big;
        return 0;
    }
    for (int dt = 1; dt < ONP_DTYPE_COUNT; dt++) {
        const onp_dtype_desc *d = onp_dtype_info(dt);
        if (!d->npy || strlen(d->npy + 1) != n - i || memcmp(d->npy + 1, s + i, n - i)) continue;
        t->kind = NPY_NUM;
        t->dtype = dt;
        t->itemsize = d->size;
        t->unit = d->kind == ONP_KIND_COMPLEX ? d->size / 2 : d->size;
        t->swap = t->unit > 1 && big != host_big;
        return 0;
    }
    return fail_at(c, ONP_ERR_INPUT, F, "unsupported dtype '%s'", shown(s, n, sb, sizeof sb));
}

static int parse_descr(cursor *c, npy_header *h)
{
    if (peek(c) == '[')
        return fail_at(c, ONP_ERR_INPUT, "npy.header.descr",
                       "structured (record) dtypes are not supported");
    size_t at, len, start = c->i;
    if (parse_str(c, &at, &len)) return -1;
    size_t end = c->i;
    c->i = start; /* errors point at the value */
    if (resolve_descr(c, c->p + at, len, &h->type)) return -1;
    c->i = end;
    return 0;
}

static int parse_bool(cursor *c, int *v)
{
    peek(c);
    size_t left = c->n - c->i;
    if (left >= 4 && !memcmp(c->p + c->i, "True", 4)) {
        *v = 1;
        c->i += 4;
    } else if (left >= 5 && !memcmp(c->p + c->i, "False", 5)) {
        *v = 0;
        c->i += 5;
    } else {
        return fail_at(c, ONP_ERR_FORMAT, "npy.header.fortran_order", "must be True or False");
    }
    return 0;
}

static int parse_dim(cursor *c, int64_t *v)
{
    const char *F = "npy.header.shape";
    int neg = peek(c) == '-';
    size_t i = c->i + (size_t)neg;
    uint64_t u;
    if (i >= c->n || !is_digit(c->p[i]))
        return fail_at(c, ONP_ERR_FORMAT, F, "expected an integer dimension");
    if (parse_decimal(c->p, c->n, &i, (uint64_t)INT64_MAX, &u))
        return fail_at(c, ONP_ERR_FORMAT, F, "dimension is not a decimal below 2^63");
    if (neg) return fail_at(c, ONP_ERR_FORMAT, F, "negative dimension -%" PRIu64, u);
    if (c->long_ok && i < c->n && (c->p[i] == 'L' || c->p[i] == 'l')) i++;
    c->i = i;
    *v = (int64_t)u;
    return 0;
}

/* "()", "(5,)", "(2, 3)" or "(2, 3,)": a tuple of non-negative ints. */
static int parse_shape(cursor *c, npy_header *h)
{
    const char *F = "npy.header.shape";
    if (peek(c) != '(') return fail_at(c, ONP_ERR_FORMAT, F, "shape must be a tuple");
    size_t open = c->i++;
    int rank = 0, comma = 0;
    while (peek(c) != ')') {
        if (rank == ONP_MAX_RANK)
            return fail_at(c, ONP_ERR_INPUT, F, "more than %d dimensions", ONP_MAX_RANK);
        if (parse_dim(c, &h->dims[rank])) return -1;
        rank++;
        comma = peek(c) == ',';
        if (comma)
            c->i++;
        else if (peek(c) != ')')
            return syntax(c, "expected ',' or ')' in the shape");
    }
    c->i++;
    if (rank == 1 && !comma) {
        c->i = open;
        return fail_at(c, ONP_ERR_FORMAT, F, "shape must be a tuple: '(n)' is an integer");
    }
    h->rank = rank;
    return 0;
}

static const char *const npy_keys[3] = {"descr", "fortran_order", "shape"};
static const char *const npy_key_fields[3] = {"npy.header.descr", "npy.header.fortran_order",
                                              "npy.header.shape"};

static int key_index(const uint8_t *s, size_t n)
{
    for (int k = 0; k < 3; k++)
        if (strlen(npy_keys[k]) == n && !memcmp(npy_keys[k], s, n)) return k;
    return -1;
}

static int parse_value(cursor *c, int key, npy_header *h)
{
    if (key == 0) return parse_descr(c, h);
    if (key == 1) return parse_bool(c, &h->fortran);
    return parse_shape(c, h);
}

/* The whole dict: exactly the three keys, once each, then only blanks. */
static int parse_dict(cursor *c, npy_header *h)
{
    unsigned seen = 0;
    if (expect(c, '{', "expected '{'")) return -1;
    while (peek(c) != '}') {
        size_t at, len, kpos = c->i;
        if (parse_str(c, &at, &len)) return -1;
        int key = key_index(c->p + at, len);
        if (key < 0) {
            c->i = kpos;
            char sb[200];
            return fail_at(c, ONP_ERR_FORMAT, "npy.header", "unexpected key '%s'",
                           shown(c->p + at, len, sb, sizeof sb));
        }
        if (seen & (1u << key)) {
            c->i = kpos;
            return fail_at(c, ONP_ERR_FORMAT, npy_key_fields[key], "duplicate key '%s'",
                           npy_keys[key]);
        }
        seen |= 1u << key;
        if (expect(c, ':', "expected ':' after a key")) return -1;
        if (parse_value(c, key, h)) return -1;
        if (peek(c) == ',')
            c->i++;
        else if (peek(c) != '}')
            return syntax(c, "expected ',' or '}'");
    }
    c->i++;
    if (peek(c) != -1) return syntax(c, "unexpected bytes after the dict");
    for (int k = 0; k < 3; k++)
        if (!(seen & (1u << k)))
            return fail_at(c, ONP_ERR_FORMAT, "npy.header", "missing key '%s'", npy_keys[k]);
    return 0;
}

// --- reading -----------------------------------------------------------------

/* Magic, version and header length; the header must fit in the file. */
static int read_preamble(const uint8_t *buf, size_t n, const char *file, int *major, size_t *hstart,
                         size_t *hlen, onp_error *e)
{
    if (n < NPY_MAGIC_LEN || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN))
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.magic", 0,
                             "not a .npy file (no \\x93NUMPY magic)");
    if (n < 8) return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.version", 6, "file truncated");
    if (buf[6] < 1 || buf[6] > 3 || buf[7] != 0)
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.version", 6,
                             "unsupported version %u.%u (1.0, 2.0 and 3.0 are known)", buf[6],
                             buf[7]);
    *major = buf[6];
    size_t lenbytes = *major == 1 ? 2 : 4;
    if (n < 8 + lenbytes)
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.header_len", 8, "file truncated");
    uint8_t b[4] = {0, 0, 0, 0};
    memcpy(b, buf + 8, lenbytes);
    uint32_t len =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    *hstart = 8 + lenbytes;
    if (len > n - *hstart)
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.header_len", 8,
                             "header length %" PRIu32 " exceeds the %zu bytes that follow", len,
                             n - *hstart);
    *hlen = len;
    return 0;
}

static void decode_numeric(const uint8_t *src, const npy_header *h, onp_tensor *t)
{
    uint8_t *dst = t->data;
    size_t sz = h->type.itemsize, count = (size_t)t->count;
    if (!t->nbytes) return;
    if (!h->fortran || h->rank < 2) {
        memcpy(dst, src, t->nbytes);
    } else {
        forder f;
        forder_init(&f, h->rank, h->dims);
        for (size_t k = 0; k < count; k++, forder_next(&f))
            memcpy(dst + f.pos * sz, src + k * sz, sz);
    }
    if (h->type.swap) swap_units(dst, t->nbytes, h->type.unit);
    if (t->dtype == ONP_BOOL)
        for (size_t k = 0; k < count; k++) dst[k] = dst[k] != 0;
}

static size_t utf8_len(uint32_t cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

static uint8_t *utf8_put(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        *o++ = (uint8_t)cp;
    } else if (cp < 0x800) {
        *o++ = (uint8_t)(0xC0 | cp >> 6);
        *o++ = (uint8_t)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (uint8_t)(0xE0 | cp >> 12);
        *o++ = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (uint8_t)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (uint8_t)(0xF0 | cp >> 18);
        *o++ = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (uint8_t)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Units (bytes for 'S', code points for 'U') of element s, trailing NULs
 * stripped as numpy does. */
static size_t units_of(const uint8_t *s, const npy_type *ty)
{
    size_t k = ty->itemsize / ty->unit;
    if (ty->kind == NPY_BYTES)
        while (k && !s[k - 1]) k--;
    else
        while (k && !load_u32(s + 4 * (k - 1), ty->swap)) k--;
    return k;
}

/* Decoded length of element s in bytes (UTF-8 for 'U'); -1 with *bad set
 * to the index of a code point that is not a Unicode scalar value. */
static int element_len(const uint8_t *s, const npy_type *ty, size_t *len, size_t *bad)
{
    size_t k = units_of(s, ty);
    *len = k;
    if (ty->kind == NPY_BYTES) return 0;
    *len = 0;
    for (size_t j = 0; j < k; j++) {
        uint32_t cp = load_u32(s + 4 * j, ty->swap);
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = j;
            return -1;
        }
        *len += utf8_len(cp);
    }
    return 0;
}

static void element_copy(uint8_t *o, const uint8_t *s, const npy_type *ty)
{
    size_t k = units_of(s, ty);
    if (ty->kind == NPY_BYTES) {
        if (k) memcpy(o, s, k);
        return;
    }
    for (size_t j = 0; j < k; j++) o = utf8_put(o, load_u32(s + 4 * j, ty->swap));
}

/* 'S' and 'U' data: two passes (lengths, then bytes) in file order. */
static int decode_strings(const uint8_t *src, int64_t data_off, const npy_header *h, int64_t count,
                          const char *file, onp_tensor *t, onp_error *e)
{
    size_t n = (size_t)count, sz = h->type.itemsize;
    int perm = h->fortran && h->rank > 1;
    size_t *lens = malloc((n ? n : 1) * sizeof *lens);
    if (!lens) return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    forder f;
    if (n) forder_init(&f, h->rank, h->dims);
    for (size_t k = 0; k < n; k++, perm ? forder_next(&f) : (void)0) {
        size_t len, bad = 0;
        if (element_len(src + k * sz, &h->type, &len, &bad)) {
            free(lens);
            return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.data",
                                 data_off + (int64_t)(k * sz + 4 * bad),
                                 "element %zu holds an invalid code point", k);
        }
        lens[perm ? f.pos : k] = len;
    }
    int rc = onp_tensor_alloc_strings(t, h->rank, h->dims, lens, e);
    free(lens);
    if (rc) return onp_error_set_file(e, file);
    if (n) forder_init(&f, h->rank, h->dims);
    for (size_t k = 0; k < n; k++, perm ? forder_next(&f) : (void)0) {
        size_t c = perm ? f.pos : k;
        element_copy(onp_tensor_string_at(t, (int64_t)c), src + k * sz, &h->type);
    }
    return 0;
}

/* Data size checks: exact fit, shape product, the caller's cap. */
static int check_sizes(const npy_header *h, size_t n, size_t data_off, const char *file, size_t max,
                       int64_t *count, onp_error *e)
{
    onp_error se;
    size_t data_size;
    if (onp_shape_count(h->rank, h->dims, h->type.itemsize, count, &data_size, &se))
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.header.shape", -1, "%s", se.msg);
    size_t have = n - data_off;
    if (data_size > have)
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.data", (int64_t)data_off,
                             "truncated: the shape needs %zu bytes of data, %zu present", data_size,
                             have);
    if (data_size < have)
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npy.data", (int64_t)(data_off + data_size),
                             "%zu trailing bytes after the data", have - data_size);
    size_t need = data_size;
    if (h->type.kind != NPY_NUM) {
        size_t views = (size_t)*count;
        if (views > (SIZE_MAX - need) / sizeof(onp_bytes))
            need = SIZE_MAX;
        else
            need += views * sizeof(onp_bytes);
    }
    if (need > max)
        return onp_error_set(e, ONP_ERR_INPUT, file, "npy.data", (int64_t)data_off,
                             "the array needs %zu bytes, over the limit of %zu", need, max);
    return 0;
}

int onp_npy_decode_borrow(const uint8_t *buf, size_t n, const char *file, const onp_tread_opts *ro,
                          void *borrow_owner, void (*borrow_ref)(void *),
                          void (*borrow_unref)(void *), onp_tensor *out, onp_error *e)
{
    int major = 0;
    size_t hstart = 0, hlen = 0;
    int64_t count = 0;
    npy_header h;
    memset(out, 0, sizeof *out);
    memset(&h, 0, sizeof h);
    if (!buf) n = 0;
    if (read_preamble(buf, n, file, &major, &hstart, &hlen, e)) return -1;
    cursor c = {buf + hstart, hlen, 0, (int64_t)hstart, major < 3, file, e};
    if (parse_dict(&c, &h)) return -1;
    size_t data_off = hstart + hlen;
    if (check_sizes(&h, n, data_off, file, max_bytes_of(ro), &count, e)) return -1;
    if (h.type.kind != NPY_NUM)
        return decode_strings(buf + data_off, (int64_t)data_off, &h, count, file, out, e);
    if (borrow_owner && !h.type.swap && (!h.fortran || h.rank < 2) && h.type.dtype != ONP_BOOL &&
        ((uintptr_t)(buf + data_off)) % h.type.unit == 0) {
        /* little-endian, C order, aligned: the tensor views the caller's bytes */
        out->dtype = h.type.dtype;
        out->rank = h.rank;
        memcpy(out->dims, h.dims, sizeof h.dims);
        if (onp_shape_count(h.rank, h.dims, h.type.itemsize, &out->count, &out->nbytes, e))
            return -1;
        out->data = (void *)(buf + data_off);
        borrow_ref(borrow_owner);
        out->owner = borrow_owner;
        out->free_fn = borrow_unref;
        return 0;
    }
    if (onp_tensor_alloc(out, h.type.dtype, h.rank, h.dims, e)) return onp_error_set_file(e, file);
    decode_numeric(buf + data_off, &h, out);
    return 0;
}

int onp_npy_decode(const uint8_t *buf, size_t n, const char *file, const onp_tread_opts *ro,
                   onp_tensor *out, onp_error *e)
{
    return onp_npy_decode_borrow(buf, n, file, ro, NULL, NULL, NULL, out, e);
}

// --- writing -----------------------------------------------------------------

/* The descr and bytes per element for t; strings get 'S<longest>'. */
static int pick_descr(const onp_tensor *t, int big, char *descr, size_t dn, size_t *itemsize,
                      size_t *unit, onp_error *e)
{
    if (t->dtype == ONP_BFLOAT16)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.header.descr", -1,
                             "numpy has no bfloat16 dtype; write the tensor as .pb instead");
    if (t->dtype == ONP_STRING) {
        size_t longest = 1;
        for (int64_t i = 0; i < t->count; i++) {
            const onp_bytes *s = &t->strings[i];
            if (s->n && memchr(s->p, 0, s->n))
                return onp_error_set(
                    e, ONP_ERR_USAGE, NULL, "npy.data", -1,
                    "string %" PRId64 " holds a NUL byte, which numpy 'S' arrays cannot keep", i);
            if (s->n > longest) longest = s->n;
        }
        if (longest > NPY_ITEM_MAX)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.header.descr", -1,
                                 "a string of %zu bytes is too long for numpy", longest);
        snprintf(descr, dn, "|S%zu", longest);
        *itemsize = longest;
        *unit = 1;
        return 0;
    }
    const onp_dtype_desc *d = onp_dtype_info(t->dtype);
    if (!d || !d->npy)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.header.descr", -1,
                             "dtype %s (%d) has no numpy equivalent: write it as .pb",
                             onp_dtype_name(t->dtype), (int)t->dtype);
    snprintf(descr, dn, "%s", d->npy);
    if (descr[0] != '|') descr[0] = big ? '>' : '<';
    *itemsize = d->size;
    *unit = d->kind == ONP_KIND_COMPLEX ? d->size / 2 : d->size;
    return 0;
}

/* numpy's header text: the dict, then room for the growing axis. */
static size_t header_text(char *h, size_t hn, const char *descr, int fortran, int rank,
                          const int64_t *dims)
{
    size_t k = (size_t)snprintf(h, hn, "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr,
                                fortran ? "True" : "False");
    for (int i = 0; i < rank; i++)
        k += (size_t)snprintf(h + k, hn - k, "%s%" PRId64, i ? ", " : "", dims[i]);
    k += (size_t)snprintf(h + k, hn - k, "%s), }", rank == 1 ? "," : "");
    if (rank > 0) {
        char digits[24];
        int w = snprintf(digits, sizeof digits, "%" PRId64, dims[fortran ? rank - 1 : 0]);
        for (int i = w; i < NPY_GROWTH_DIGITS; i++) h[k++] = ' ';
    }
    return k;
}

/* Header length (text + padding + '\n') for a version, or 0 when too long. */
static size_t padded_len(size_t text, int version)
{
    size_t pre = version == 1 ? 10 : 12;
    size_t len = text + 1;
    len += NPY_ALIGN - (pre + len) % NPY_ALIGN;
    return version == 1 && len > 0xFFFF ? 0 : len;
}

static void encode_data(uint8_t *dst, const onp_tensor *t, size_t sz, size_t unit, int swap,
                        int fortran)
{
    size_t count = (size_t)t->count;
    int perm = fortran && t->rank > 1;
    forder f;
    if (count) forder_init(&f, t->rank, t->dims);
    if (t->dtype == ONP_STRING) {
        memset(dst, 0, count * sz);
        for (size_t k = 0; k < count; k++, perm ? forder_next(&f) : (void)0) {
            const onp_bytes *s = &t->strings[perm ? f.pos : k];
            if (s->n) memcpy(dst + k * sz, s->p, s->n);
        }
        return;
    }
    if (!count) return;
    if (!perm)
        memcpy(dst, t->data, count * sz);
    else
        for (size_t k = 0; k < count; k++, forder_next(&f))
            memcpy(dst + k * sz, (const uint8_t *)t->data + f.pos * sz, sz);
    if (swap) swap_units(dst, count * sz, unit);
    if (t->dtype == ONP_BOOL)
        for (size_t k = 0; k < count; k++) dst[k] = dst[k] != 0;
}

int onp_npy_encode(const onp_tensor *t, const onp_twrite_opts *o, onp_buf *out, onp_error *e)
{
    static const onp_twrite_opts defaults;
    char descr[32], text[NPY_HDR_MAX];
    size_t itemsize = 0, unit = 0, data_size = 0;
    int64_t count = 0;
    if (!o) o = &defaults;
    if (!t || !out) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "no tensor or buffer");
    if (o->npy_version < 0 || o->npy_version > 3)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.version", -1,
                             "npy version %d: 1, 2, 3 or 0 (automatic)", o->npy_version);
    if (pick_descr(t, o->big_endian, descr, sizeof descr, &itemsize, &unit, e)) return -1;
    if (onp_shape_count(t->rank, t->dims, itemsize, &count, &data_size, e) || count != t->count)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.header.shape", -1,
                             "the tensor's shape and element count disagree");
    if (t->dtype != ONP_STRING && data_size != t->nbytes)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.data", -1,
                             "the tensor holds %zu bytes, its shape needs %zu", t->nbytes,
                             data_size);
    size_t tl = header_text(text, sizeof text, descr, o->fortran_order, t->rank, t->dims);
    int version = o->npy_version ? o->npy_version : padded_len(tl, 1) ? 1 : 2;
    size_t hlen = padded_len(tl, version), pre = version == 1 ? 10 : 12;
    if (!hlen)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.version", -1,
                             "the header does not fit in version 1.0");
    if (data_size > SIZE_MAX - pre - hlen)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "npy.data", -1, "array too large");
    uint8_t *p = onp_buf_grow(out, pre + hlen + data_size);
    if (!p)
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1,
                             "cannot grow the output buffer by %zu bytes", pre + hlen + data_size);
    memcpy(p, NPY_MAGIC, NPY_MAGIC_LEN);
    p[6] = (uint8_t)version;
    p[7] = 0;
    uint32_t hl = (uint32_t)hlen;
    uint8_t le[4] = {(uint8_t)hl, (uint8_t)(hl >> 8), (uint8_t)(hl >> 16), (uint8_t)(hl >> 24)};
    memcpy(p + 8, le, pre - 8);
    memcpy(p + pre, text, tl);
    memset(p + pre + tl, ' ', hlen - tl - 1);
    p[pre + hlen - 1] = '\n';
    int swap = unit > 1 && (o->big_endian != 0) != host_big_endian();
    encode_data(p + pre + hlen, t, itemsize, unit, swap, o->fortran_order);
    return 0;
}
