/*
 * junit.c — JUnit XML writer (junit.h).  Depends on the public buffer and
 * error API only; knows nothing of ONNX Runtime.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "onnxparity/utf8.h"
#include "junit.h"
#include "report.h"

void junit_init(junit *j)
{
    memset(j, 0, sizeof *j);
    onp_buf_init(&j->body, 0);
    onp_buf_init(&j->props, 0);
}

void junit_free(junit *j)
{
    if (!j) return;
    onp_buf_free(&j->body);
    onp_buf_free(&j->props);
    for (size_t i = 0; i < j->cap_ids; i++) free(j->ids[i]);
    free(j->ids);
    j->ids = NULL;
    j->n_ids = j->cap_ids = 0;
}

void junit_agreement_case(junit *j, const onp_agreement *a)
{
    if (!a->rows) return;
    char name[256], u[16];
    snprintf(name, sizeof name,
             "top-1 agreement %lld/%lld, flip rate at most %s at %g%% (Clopper-Pearson)",
             (long long)a->agree, (long long)a->rows, report_fmt(a->flip_upper, u, sizeof u),
             100 * a->confidence);
    junit_case(j, "agreement", name, a->flipped ? JUNIT_FAIL : JUNIT_PASS, name, NULL);
}

double junit_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void junit_set_time(junit *j, double seconds)
{
    j->time = isfinite(seconds) && seconds > 0 ? seconds : 0;
}

static size_t id_hash(const char *s)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* Add `id` to the set; 1 when it was new, 0 when present, -1 out of memory. */
static int id_add(junit *j, const char *id)
{
    if (2 * (j->n_ids + 1) > j->cap_ids) {
        size_t cap = j->cap_ids ? 2 * j->cap_ids : 64;
        char **ids = calloc(cap, sizeof *ids);
        if (!ids) return -1;
        for (size_t i = 0; i < j->cap_ids; i++) {
            if (!j->ids[i]) continue;
            size_t h = id_hash(j->ids[i]) & (cap - 1);
            while (ids[h]) h = (h + 1) & (cap - 1);
            ids[h] = j->ids[i];
        }
        free(j->ids);
        j->ids = ids, j->cap_ids = cap;
    }
    size_t h = id_hash(id) & (j->cap_ids - 1);
    for (; j->ids[h]; h = (h + 1) & (j->cap_ids - 1))
        if (!strcmp(j->ids[h], id)) return 0;
    if (!(j->ids[h] = strdup(id))) return -1;
    j->n_ids++;
    return 1;
}

/* `name`, or `name #K` for the first K >= 2 that makes (classname, name)
 * unique.  Written into buf; returns buf (or name when memory ran out). */
static const char *unique_name(junit *j, const char *classname, const char *name, char *buf,
                               size_t n)
{
    for (int k = 1; k < 100000; k++) {
        char id[2400];
        if (k == 1)
            snprintf(buf, n, "%s", name);
        else
            snprintf(buf, n, "%s #%d", name, k);
        snprintf(id, sizeof id, "%s\x1f%s", classname, buf);
        int r = id_add(j, id);
        if (r) return r < 0 ? name : buf;
    }
    return name;
}

static void put(onp_buf *b, const char *s)
{
    onp_buf_append(b, s, strlen(s));
}

void junit_escape(onp_buf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    while (*s) {
        unsigned long cp;
        size_t n = onp_utf8_decode(s, &cp);
        if (!n) {
            put(b, "\xEF\xBF\xBD"); /* U+FFFD for one invalid byte */
            s++;
            continue;
        }
        switch (cp) {
        case '<': put(b, "&lt;"); break;
        case '>': put(b, "&gt;"); break;
        case '&': put(b, "&amp;"); break;
        case '"': put(b, "&quot;"); break;
        case '\'': put(b, "&apos;"); break;
        case '\t': put(b, "&#9;"); break;
        case '\n': put(b, "&#10;"); break;
        case '\r': put(b, "&#13;"); break;
        default:
            if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF)
                put(b, cp < 0x20 ? "?" : "\xEF\xBF\xBD"); /* not XML 1.0 characters */
            else
                onp_buf_append(b, s, n);
        }
        s += n;
    }
}

void junit_case(junit *j, const char *classname, const char *name, junit_status st,
                const char *message, const char *text)
{
    onp_buf *b = &j->body;
    char uname[1100], tm[40];
    classname = classname ? classname : "";
    name = unique_name(j, classname, name ? name : "", uname, sizeof uname);
    j->tests++;
    j->time_sum += j->time;
    snprintf(tm, sizeof tm, "\" time=\"%.6f", j->time);
    put(b, "    <testcase classname=\"");
    junit_escape(b, classname);
    put(b, "\" name=\"");
    junit_escape(b, name);
    put(b, tm);
    if (st == JUNIT_PASS) {
        put(b, "\"/>\n");
        return;
    }
    if (st == JUNIT_WARN) {
        put(b, "\">\n      <system-out>");
        junit_escape(b, text ? text : message);
        put(b, "</system-out>\n    </testcase>\n");
        return;
    }
    const char *tag = st == JUNIT_FAIL ? "failure" : "error";
    if (st == JUNIT_FAIL)
        j->failures++;
    else
        j->errors++;
    put(b, "\">\n      <");
    put(b, tag);
    put(b, " type=\"");
    put(b, st == JUNIT_FAIL ? "parity" : "error");
    put(b, "\" message=\"");
    junit_escape(b, message ? message : "");
    put(b, "\">");
    junit_escape(b, text ? text : message);
    put(b, "</");
    put(b, tag);
    put(b, ">\n    </testcase>\n");
}

void junit_property(junit *j, const char *name, const char *value)
{
    put(&j->props, "      <property name=\"");
    junit_escape(&j->props, name);
    put(&j->props, "\" value=\"");
    junit_escape(&j->props, value);
    put(&j->props, "\"/>\n");
}

void junit_env_properties(junit *j, const onp_env *env)
{
    junit_property(j, "onnxparity", ONP_VERSION);
    for (int f = 0; f < ONP_ENV_FIELD_COUNT; f++)
        if (env->v[f][0]) junit_property(j, onp_env_field_name((onp_env_field)f), env->v[f]);
}

int junit_write(junit *j, const char *suite, const char *path, onp_error *e)
{
    onp_buf doc;
    char nums[200];
    onp_buf_init(&doc, 0);
    snprintf(nums, sizeof nums, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" time=\"%.6f\">\n",
             j->tests, j->failures, j->errors, j->time_sum);
    put(&doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"");
    junit_escape(&doc, suite);
    put(&doc, nums);
    put(&doc, "  <testsuite name=\"");
    junit_escape(&doc, suite);
    put(&doc, nums);
    if (j->props.n) {
        put(&doc, "    <properties>\n");
        onp_buf_append(&doc, j->props.p, j->props.n);
        put(&doc, "    </properties>\n");
    }
    if (j->body.n) onp_buf_append(&doc, j->body.p, j->body.n);
    put(&doc, "  </testsuite>\n</testsuites>\n");
    if (doc.failed || j->body.failed || j->props.failed) {
        onp_buf_free(&doc);
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory building JUnit XML");
    }
    int rc = onp_buf_write_file(&doc, path, e);
    onp_buf_free(&doc);
    return rc;
}

void junit_write_error(const char *suite, const char *what, const char *why, const char *path)
{
    junit j;
    onp_error e;
    onp_error_clear(&e);
    junit_init(&j);
    junit_case(&j, "onnxparity", what, JUNIT_ERROR, why, why);
    (void)junit_write(&j, suite, path, &e);
    junit_free(&j);
}

/* The shortest %g form that reads back as v (up to 17 digits): a reader
 * comparing "expected" with "got" sees them differ wherever they do. */
static const char *num(double v, char *buf, size_t n)
{
    if (!isfinite(v)) return report_fmt(v, buf, n);
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

char *junit_metrics_text(const onp_metrics *m, char *buf, size_t n)
{
    char a[32], r[32], f[32], we[32], wa[32], nr[32], na[32], tr[32], ta[32];
    int k =
        snprintf(buf, n, "max_abs %s, max_rel %s, mismatches %lld/%lld (frac %s)",
                 num(m->max_abs, a, sizeof a), num(m->max_rel, r, sizeof r),
                 (long long)m->mismatches, (long long)m->count, num(m->mismatch_frac, f, sizeof f));
    if (k >= 0 && (size_t)k < n && m->worst_index >= 0)
        k += snprintf(buf + k, n - (size_t)k, ", worst at index %lld: expected %s, got %s",
                      (long long)m->worst_index, num(m->worst_expected, we, sizeof we),
                      num(m->worst_actual, wa, sizeof wa));
    if (k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k,
                 "; needed rtol %s or atol %s (tolerance rtol %s, atol %s)%s%s",
                 num(m->needed_rtol, nr, sizeof nr), num(m->needed_atol, na, sizeof na),
                 num(m->tol.rtol, tr, sizeof tr), num(m->tol.atol, ta, sizeof ta),
                 m->shape_ok ? "" : "; shape differs", m->dtype_ok ? "" : "; dtype differs");
    return buf;
}
