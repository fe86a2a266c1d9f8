/*
 * npz.c — numpy .npz archives (include/onnxparity/tfile.h): a zip file whose
 * members "NAME.npy" each hold one array.  libzip does the zip work
 * (directory, zip64, inflate, CRC); this file adds the policy a reader of
 * untrusted archives needs and libzip does not apply:
 *   - member names: exactly "NAME.npy", no "..", no leading '/', no
 *     backslash, no NUL byte (checked on the raw central-directory bytes:
 *     libzip shows a NUL in a name as a space), no duplicates;
 *   - sizes: a member's declared size must be within max_bytes, and it is
 *     inflated into a buffer that grows with the bytes really produced and
 *     never past the declared size plus one byte, so a zip bomb costs at most
 *     what it declares;
 *   - only stored and deflate members, never encrypted ones.
 * The writer builds the archive in a libzip memory source (fixed 1980-01-01
 * timestamps, so output is reproducible) and appends it to the caller's
 * onp_buf.  Depends on npy.c, tensor, util and libzip.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zip.h>

#include "onnxparity/tfile.h"
#include "util/fsio.h"

#define NPZ_DEFAULT_MAX ((uint64_t)16 << 30)
#define NPZ_CHUNK ((size_t)1 << 16) /* bytes asked of the inflater at a time */
#define NPZ_EOCD_LEN 22
#define NPZ_CDH_LEN 46

typedef struct npz_member {
    zip_uint64_t index; /* libzip's entry index */
    char *name;         /* array name: the member name without ".npy"; owned */
} npz_member;

struct onp_npz {
    zip_t *za;    /* owns its source */
    onp_map *map; /* the mapped file (onp_npz_open), or NULL */
    char *file;   /* name used in errors; owned */
    size_t max_bytes;
    size_t n;
    npz_member *m;       /* [n] archive order */
    npz_member **sorted; /* [n] pointers into m, by name */
};

// --- little helpers ------------------------------------------------------------

static uint16_t le16(const uint8_t *p)
{
    uint8_t b[2];
    memcpy(b, p, 2);
    return (uint16_t)(b[0] | b[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    uint8_t b[4];
    memcpy(b, p, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static size_t max_bytes_of(const onp_tread_opts *ro)
{
    if (ro && ro->max_bytes) return ro->max_bytes;
    return NPZ_DEFAULT_MAX < SIZE_MAX ? (size_t)NPZ_DEFAULT_MAX : SIZE_MAX;
}

/* Why the member name p[n] is unsafe, or NULL when it is "NAME.npy" and safe.
 * The writer applies the same rules. */
static const char *unsafe_name(const char *p, size_t n)
{
    if (memchr(p, '\0', n)) return "contains a NUL byte";
    if (n < 4 || memcmp(p + n - 4, ".npy", 4)) return "does not end in .npy";
    if (n == 4) return "has an empty array name";
    if (p[0] == '/') return "is an absolute path";
    if (memchr(p, '\\', n)) return "contains a backslash";
    if (memmem(p, n, "..", 2)) return "contains \"..\"";
    return NULL;
}

/* Member names quoted in messages: printable, clipped. */
static const char *show(const char *p, size_t n, char *buf, size_t bn)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < bn; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch >= 0x20 && ch < 0x7f)
            buf[k++] = (char)ch;
        else
            k += (size_t)snprintf(buf + k, bn - k, "\\x%02x", ch);
    }
    buf[k] = '\0';
    return buf;
}

/* qsort comparator over arrays of `const char *` (names). */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* qsort comparator over arrays of `npz_member *`, by array name. */
static int cmp_member(const void *a, const void *b)
{
    return strcmp((*(npz_member *const *)a)->name, (*(npz_member *const *)b)->name);
}

// --- the raw central directory --------------------------------------------------

/* Offset and entry count of the central directory behind the end record at
 * `eocd`, from the zip64 end record when a locator points to one. */
static int cd_locate(const uint8_t *buf, size_t eocd, uint64_t *off, uint64_t *count)
{
    *count = le16(buf + eocd + 10);
    *off = le32(buf + eocd + 16);
    if (*count != 0xFFFF && *off != 0xFFFFFFFF) return 0;
    if (eocd < 20 || le32(buf + eocd - 20) != 0x07064b50) return 0; /* 65535 entries, no zip64 */
    uint64_t z = le64(buf + eocd - 12);
    if (z > eocd - 20 || eocd - 20 - z < 56 || le32(buf + z) != 0x06064b50) return -1;
    *count = le64(buf + z + 32);
    *off = le64(buf + z + 48);
    return 0;
}

/* Walk the central directory behind the end record at `eocd`: n records,
 * each name recorded in at[i] (file offset) and len[i]. */
static int cd_walk(const uint8_t *buf, size_t size, size_t eocd, size_t n, size_t *at, size_t *len)
{
    uint64_t off, count;
    if (cd_locate(buf, eocd, &off, &count) || count != n || off > size) return -1;
    size_t p = (size_t)off;
    for (size_t i = 0; i < n; i++) {
        if (size - p < NPZ_CDH_LEN || le32(buf + p) != 0x02014b50) return -1;
        size_t nl = le16(buf + p + 28), xl = le16(buf + p + 30), cl = le16(buf + p + 32);
        if (size - p - NPZ_CDH_LEN < nl + xl + cl) return -1;
        at[i] = p + NPZ_CDH_LEN;
        len[i] = nl;
        p += NPZ_CDH_LEN + nl + xl + cl;
    }
    return 0;
}

/* 1 when libzip's name `zn` is the raw name r[n]; libzip shows NULs as spaces. */
static int same_name(const char *zn, const uint8_t *r, size_t n)
{
    if (!zn || strlen(zn) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if ((uint8_t)zn[i] != r[i] && !(r[i] == 0 && zn[i] == ' ')) return 0;
    return 1;
}

/* The raw name of each of libzip's n entries, found by trying end records
 * from the back of the file; the names must agree with libzip's. */
static int cd_names(zip_t *za, const uint8_t *buf, size_t size, size_t n, size_t *at, size_t *len)
{
    if (size < NPZ_EOCD_LEN) return -1;
    size_t lowest = size - NPZ_EOCD_LEN > 0xFFFF ? size - NPZ_EOCD_LEN - 0xFFFF : 0;
    for (size_t pos = size - NPZ_EOCD_LEN + 1; pos-- > lowest;) {
        if (le32(buf + pos) != 0x06054b50) continue;
        if (le16(buf + pos + 20) > size - pos - NPZ_EOCD_LEN) continue;
        if (cd_walk(buf, size, pos, n, at, len)) continue;
        size_t i = 0;
        while (i < n && same_name(zip_get_name(za, i, ZIP_FL_ENC_RAW), buf + at[i], len[i])) i++;
        if (i == n) return 0;
    }
    return -1;
}

// --- opening -----------------------------------------------------------------------

static int zip_fail(onp_error *e, const char *file, const char *field, int64_t off, int code,
                    const char *what)
{
    zip_error_t ze;
    zip_error_init_with_code(&ze, code);
    onp_errcode c = code == ZIP_ER_MEMORY ? ONP_ERR_NOMEM : ONP_ERR_FORMAT;
    onp_error_set(e, c, file, field, off, "%s: %s", what, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return -1;
}

static zip_t *open_zip(const uint8_t *buf, size_t n, int flags, int *code)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(buf, n, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, flags, &ze) : NULL;
    if (!za) {
        *code = zip_error_code_zip(&ze);
        if (src) zip_source_free(src);
    }
    zip_error_fini(&ze);
    return za;
}

/* Read the member table of z->za, refusing unsafe or duplicate names. */
static int list_members(onp_npz *z, const uint8_t *buf, size_t size, onp_error *e)
{
    zip_int64_t ne = zip_get_num_entries(z->za, 0);
    if (ne < 0 || (uint64_t)ne > size / NPZ_CDH_LEN)
        return onp_error_set(e, ONP_ERR_FORMAT, z->file, "npz.central_directory", -1,
                             "implausible entry count %" PRId64, (int64_t)ne);
    size_t n = (size_t)ne;
    size_t *at = calloc(n ? n : 1, sizeof *at), *len = calloc(n ? n : 1, sizeof *len);
    z->m = calloc(n ? n : 1, sizeof *z->m);
    z->sorted = calloc(n ? n : 1, sizeof *z->sorted);
    int rc = -1;
    char shown[96];
    if (!at || !len || !z->m || !z->sorted) {
        onp_error_set(e, ONP_ERR_NOMEM, z->file, NULL, -1, "out of memory");
        goto done;
    }
    if (cd_names(z->za, buf, size, n, at, len)) {
        onp_error_set(e, ONP_ERR_FORMAT, z->file, "npz.central_directory", -1,
                      "the central directory is inconsistent");
        goto done;
    }
    z->n = n; /* names start NULL, so onp_npz_close can free any prefix */
    for (size_t i = 0; i < n; i++) {
        const char *raw = (const char *)buf + at[i];
        const char *why = unsafe_name(raw, len[i]);
        if (why) {
            onp_error_set(e, ONP_ERR_INPUT, z->file, "npz.member", (int64_t)at[i],
                          "member name '%s' %s", show(raw, len[i], shown, sizeof shown), why);
            goto done;
        }
        z->m[i].index = i;
        z->m[i].name = strndup(raw, len[i] - 4);
        if (!z->m[i].name) {
            onp_error_set(e, ONP_ERR_NOMEM, z->file, NULL, -1, "out of memory");
            goto done;
        }
        z->sorted[i] = &z->m[i];
    }
    qsort(z->sorted, n, sizeof *z->sorted, cmp_member);
    for (size_t i = 1; i < n; i++) {
        const char *b = z->sorted[i]->name;
        if (!strcmp(z->sorted[i - 1]->name, b)) {
            onp_error_set(e, ONP_ERR_INPUT, z->file, "npz.member", -1,
                          "duplicate member name '%s.npy'", show(b, strlen(b), shown, 80));
            goto done;
        }
    }
    rc = 0;
done:
    free(at);
    free(len);
    return rc;
}

/* libzip refuses duplicate names outright under ZIP_CHECKCONS; open again
 * without it so the error can name the duplicate. */
static int explain_duplicates(onp_npz *z, const uint8_t *buf, size_t n, onp_error *e)
{
    int code;
    z->za = open_zip(buf, n, ZIP_RDONLY, &code);
    if (z->za && list_members(z, buf, n, e)) return -1;
    return onp_error_set(e, ONP_ERR_INPUT, z->file, "npz.member", -1,
                         "the archive holds duplicate member names");
}

int onp_npz_open_mem(const uint8_t *buf, size_t n, const char *file, const onp_tread_opts *ro,
                     onp_npz **out, onp_error *e)
{
    int code = 0;
    *out = NULL;
    if (!file) file = "<memory>";
    if (!buf || !n)
        return onp_error_set(e, ONP_ERR_FORMAT, file, "npz", 0, "empty file: not a zip archive");
    onp_npz *z = calloc(1, sizeof *z);
    if (!z || !(z->file = strdup(file))) {
        free(z);
        return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    }
    z->max_bytes = max_bytes_of(ro);
    z->za = open_zip(buf, n, ZIP_RDONLY | ZIP_CHECKCONS, &code);
    int rc;
    if (!z->za && code == ZIP_ER_EXISTS)
        rc = explain_duplicates(z, buf, n, e);
    else if (!z->za)
        rc = zip_fail(e, file, "npz", -1, code, "not a readable zip archive");
    else
        rc = list_members(z, buf, n, e);
    if (rc) {
        onp_npz_close(z);
        return -1;
    }
    *out = z;
    return 0;
}

int onp_npz_open(const char *path, const onp_tread_opts *ro, onp_npz **out, onp_error *e)
{
    onp_map *map;
    *out = NULL;
    if (onp_map_open(path, &map, e)) return -1;
    if (onp_npz_open_mem(map->p, map->n, path, ro, out, e)) {
        onp_map_unref(map);
        return -1;
    }
    (*out)->map = map;
    return 0;
}

size_t onp_npz_count(const onp_npz *z)
{
    return z ? z->n : 0;
}

const char *onp_npz_name(const onp_npz *z, size_t i)
{
    return z && i < z->n ? z->m[i].name : NULL;
}

long onp_npz_find(const onp_npz *z, const char *name)
{
    if (!z || !name) return -1;
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(z->sorted[mid]->name, name);
        if (!c) return (long)(z->sorted[mid] - z->m);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void onp_npz_close(onp_npz *z)
{
    if (!z) return;
    if (z->za) zip_discard(z->za);
    onp_map_unref(z->map);
    for (size_t i = 0; i < z->n; i++) free(z->m[i].name);
    free(z->m);
    free(z->sorted);
    free(z->file);
    free(z);
}

// --- reading a member ----------------------------------------------------------------

/* The member's declared size, after the policy checks on method and cap. */
static int member_size(onp_npz *z, size_t i, uint64_t *size, onp_error *e)
{
    const char *F = "npz.member";
    const char *name = z->m[i].name;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z->za, z->m[i].index, 0, &st))
        return zip_fail(e, z->file, F, -1, zip_error_code_zip(zip_get_error(z->za)),
                        "cannot stat member");
    unsigned need = ZIP_STAT_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
    if ((st.valid & need) != need)
        return onp_error_set(e, ONP_ERR_FORMAT, z->file, F, -1, "'%s.npy': incomplete record",
                             name);
    if (st.encryption_method != ZIP_EM_NONE)
        return onp_error_set(e, ONP_ERR_INPUT, z->file, F, -1,
                             "'%s.npy' is encrypted; encrypted members are not read", name);
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
        return onp_error_set(e, ONP_ERR_INPUT, z->file, F, -1,
                             "'%s.npy' uses compression method %d; only stored and deflate "
                             "are read",
                             name, (int)st.comp_method);
    if (st.size > z->max_bytes || st.size >= SIZE_MAX)
        return onp_error_set(e, ONP_ERR_INPUT, z->file, F, -1,
                             "'%s.npy' declares %" PRIu64 " bytes, over the limit of %zu", name,
                             (uint64_t)st.size, z->max_bytes);
    *size = st.size;
    return 0;
}

/* Inflate member i into b: at most declared + 1 bytes are ever produced, and
 * anything but exactly `declared` is an error. */
static int member_bytes(onp_npz *z, size_t i, uint64_t declared, onp_buf *b, onp_error *e)
{
    const char *F = "npz.member", *name = z->m[i].name;
    zip_file_t *f = zip_fopen_index(z->za, z->m[i].index, 0);
    if (!f)
        return zip_fail(e, z->file, F, -1, zip_error_code_zip(zip_get_error(z->za)),
                        "cannot open member");
    onp_buf_init(b, (size_t)declared + 1);
    int rc = 0;
    while (b->n <= declared) {
        size_t room = (size_t)declared + 1 - b->n, chunk = room < NPZ_CHUNK ? room : NPZ_CHUNK;
        uint8_t *p = onp_buf_grow(b, chunk);
        if (!p) {
            rc = onp_error_set(e, ONP_ERR_NOMEM, z->file, F, -1, "out of memory");
            break;
        }
        zip_int64_t got = zip_fread(f, p, chunk);
        b->n -= chunk - (got > 0 ? (size_t)got : 0);
        if (got < 0)
            rc = onp_error_set(e, ONP_ERR_FORMAT, z->file, F, -1, "'%s.npy' cannot be read: %s",
                               name, zip_file_strerror(f));
        if (got <= 0) break;
    }
    zip_fclose(f);
    if (!rc && b->n > declared)
        rc = onp_error_set(e, ONP_ERR_FORMAT, z->file, F, -1,
                           "'%s.npy' inflates past its declared size of %" PRIu64 " bytes", name,
                           declared);
    else if (!rc && b->n < declared)
        rc = onp_error_set(e, ONP_ERR_FORMAT, z->file, F, -1,
                           "'%s.npy' ends after %zu of its declared %" PRIu64 " bytes", name, b->n,
                           declared);
    if (rc) onp_buf_free(b);
    return rc;
}

int onp_npz_read(onp_npz *z, size_t i, onp_tensor *out, onp_error *e)
{
    uint64_t declared = 0;
    onp_buf b;
    memset(out, 0, sizeof *out);
    if (!z || i >= z->n)
        return onp_error_set(e, ONP_ERR_USAGE, z ? z->file : NULL, "npz.member", -1,
                             "no member %zu", i);
    if (member_size(z, i, &declared, e) || member_bytes(z, i, declared, &b, e)) return -1;
    size_t ln = strlen(z->file) + strlen(z->m[i].name) + 2;
    char *label = malloc(ln);
    int rc = -1;
    if (!label) {
        onp_error_set(e, ONP_ERR_NOMEM, z->file, NULL, -1, "out of memory");
    } else {
        snprintf(label, ln, "%s:%s", z->file, z->m[i].name);
        onp_tread_opts ro = {z->max_bytes};
        rc = onp_npy_decode(b.p, b.n, label, &ro, out, e);
        if (rc)
            onp_error_field_prefix(e, "npz.member");
        else if ((rc = onp_tensor_set_name(out, z->m[i].name, e)))
            onp_tensor_release(out);
    }
    free(label);
    onp_buf_free(&b);
    return rc;
}

// --- writing -------------------------------------------------------------------------

/* Names present, safe, unique; `names` gets "NAME.npy" for each tensor. */
static int check_names(const onp_tensor *const *ts, size_t n, char **names, onp_error *e)
{
    char shown[96];
    for (size_t i = 0; i < n; i++) {
        if (!ts[i] || !ts[i]->name)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, "npz.member", -1,
                                 "tensor %zu has no name; .npz members are named", i);
        size_t k = strlen(ts[i]->name);
        if (!(names[i] = malloc(k + 5)))
            return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        memcpy(names[i], ts[i]->name, k);
        memcpy(names[i] + k, ".npy", 5);
        const char *why = unsafe_name(names[i], k + 4);
        if (why)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, "npz.member", -1, "member name '%s' %s",
                                 show(names[i], k + 4, shown, 80), why);
    }
    return 0;
}

/* Duplicates among the names, found by sorting a copy of the pointers. */
static int check_unique(char **names, size_t n, onp_error *e)
{
    char **s = malloc(n * sizeof *s);
    if (!s) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    memcpy(s, names, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_str);
    int rc = 0;
    for (size_t i = 1; i < n && !rc; i++)
        if (!strcmp(s[i - 1], s[i]))
            rc = onp_error_set(e, ONP_ERR_USAGE, NULL, "npz.member", -1,
                               "two tensors are named '%.*s'", (int)(strlen(s[i]) - 4), s[i]);
    free(s);
    return rc;
}

/* 1980-01-01 00:00 local time: the zip epoch, as numpy writes it. */
static time_t zip_epoch(void)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = 80;
    tm.tm_mday = 1;
    tm.tm_isdst = -1;
    return mktime(&tm);
}

/* Say which member a writer error concerns: field prefix and message. */
static int name_member(onp_error *e, const char *name)
{
    if (!e) return -1;
    char msg[sizeof e->msg];
    memcpy(msg, e->msg, sizeof msg);
    onp_error_field_prefix(e, "npz.member");
    /* the member's name, then as much of the message as the bound holds */
    int k = snprintf(e->msg, sizeof e->msg, "'%s': ", name);
    if (k >= 0 && (size_t)k < sizeof e->msg) {
        size_t n = strnlen(msg, sizeof e->msg - (size_t)k - 1);
        memcpy(e->msg + k, msg, n);
        e->msg[(size_t)k + n] = '\0';
    }
    return -1;
}

/* Add tensor t as member `name` of za. */
static int add_member(zip_t *za, const char *name, const onp_tensor *t, const onp_twrite_opts *o,
                      time_t mtime, onp_error *e)
{
    onp_buf b;
    onp_buf_init(&b, 0);
    if (onp_npy_encode(t, o, &b, e)) {
        onp_buf_free(&b);
        return name_member(e, name);
    }
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *s = zip_source_buffer_create(b.p, b.n, 1, &ze);
    zip_error_fini(&ze);
    if (!s) {
        onp_buf_free(&b);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz.member", -1, "out of memory");
    }
    zip_int64_t idx = zip_file_add(za, name, s, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
        zip_source_free(s);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz.member", -1, "cannot add '%s': %s", name,
                             zip_strerror(za));
    }
    if (zip_set_file_compression(za, (zip_uint64_t)idx, o->deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                 0) ||
        zip_file_set_mtime(za, (zip_uint64_t)idx, mtime, 0))
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz.member", -1, "cannot set up '%s': %s",
                             name, zip_strerror(za));
    return 0;
}

/* Copy the bytes of a closed in-memory archive to `out`. */
static int drain(zip_source_t *src, onp_buf *out, onp_error *e)
{
    uint8_t chunk[1 << 14];
    if (zip_source_open(src))
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz", -1, "cannot reopen the archive");
    zip_int64_t got;
    int rc = 0;
    while ((got = zip_source_read(src, chunk, sizeof chunk)) > 0)
        if (onp_buf_append(out, chunk, (size_t)got)) {
            rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz", -1, "cannot grow the output buffer");
            break;
        }
    if (!rc && got < 0)
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz", -1, "cannot read the archive back");
    zip_source_close(src);
    return rc;
}

/* Build the archive in a memory source; on success its bytes go to out. */
static int write_zip(const onp_tensor *const *ts, char **names, size_t n, const onp_twrite_opts *o,
                     onp_buf *out, onp_error *e)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_TRUNCATE, &ze) : NULL;
    zip_error_fini(&ze);
    if (!za) {
        if (src) zip_source_free(src);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz", -1, "cannot create an archive");
    }
    zip_source_keep(src);
    time_t mtime = zip_epoch();
    for (size_t i = 0; i < n; i++)
        if (add_member(za, names[i], ts[i], o, mtime, e)) {
            zip_discard(za);
            zip_source_free(src);
            return -1;
        }
    int rc = 0;
    if (zip_close(za)) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz", -1, "cannot write the archive: %s",
                           zip_strerror(za));
        zip_discard(za);
    } else {
        rc = drain(src, out, e);
    }
    zip_source_free(src);
    return rc;
}

int onp_npz_encode(const onp_tensor *const *ts, size_t n, const onp_twrite_opts *o, onp_buf *out,
                   onp_error *e)
{
    static const onp_twrite_opts defaults;
    static const uint8_t empty[NPZ_EOCD_LEN] = {'P', 'K', 5, 6};
    if (!o) o = &defaults;
    if (!out || (n && !ts))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "no tensors or buffer");
    if (n == 0) { /* libzip writes nothing for an empty archive; numpy writes this */
        if (onp_buf_append(out, empty, sizeof empty))
            return onp_error_set(e, ONP_ERR_NOMEM, NULL, "npz", -1,
                                 "cannot grow the output buffer");
        return 0;
    }
    if (n > SIZE_MAX / sizeof(char *))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "too many tensors");
    char **names = calloc(n, sizeof *names);
    if (!names) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    int rc = check_names(ts, n, names, e);
    if (!rc) rc = check_unique(names, n, e);
    if (!rc) rc = write_zip(ts, names, n, o, out, e);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}
