/*
 * junit.c — JUnit XML writer (junit.h).  Depends on the public buffer and
 * error API only; knows nothing of ONNX Runtime.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"
#include "junit.h"
#include "report.h"

void junit_init(junit *j)
{
    memset(j, 0, sizeof *j);
    onp_buf_init(&j->body, 0);
}

void junit_free(junit *j)
{
    if (j) onp_buf_free(&j->body);
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
        size_t n = utf8_decode(s, &cp);
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
    j->tests++;
    put(b, "    <testcase classname=\"");
    junit_escape(b, classname);
    put(b, "\" name=\"");
    junit_escape(b, name);
    if (st == JUNIT_PASS) {
        put(b, "\"/>\n");
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

int junit_write(junit *j, const char *suite, const char *path, onp_error *e)
{
    onp_buf doc;
    char nums[160];
    onp_buf_init(&doc, 0);
    snprintf(nums, sizeof nums, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\">\n", j->tests,
             j->failures, j->errors);
    put(&doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"");
    junit_escape(&doc, suite);
    put(&doc, nums);
    put(&doc, "  <testsuite name=\"");
    junit_escape(&doc, suite);
    put(&doc, nums);
    if (j->body.n) onp_buf_append(&doc, j->body.p, j->body.n);
    put(&doc, "  </testsuite>\n</testsuites>\n");
    if (doc.failed || j->body.failed) {
        onp_buf_free(&doc);
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory building JUnit XML");
    }
    int rc = onp_buf_write_file(&doc, path, e);
    onp_buf_free(&doc);
    return rc;
}

char *junit_metrics_text(const onp_metrics *m, char *buf, size_t n)
{
    char a[16], r[16], f[16], we[16], wa[16], nr[16], na[16], tr[16], ta[16];
    int k = snprintf(buf, n, "max_abs %s, max_rel %s, mismatches %lld/%lld (frac %s)",
                     report_fmt(m->max_abs, a, sizeof a), report_fmt(m->max_rel, r, sizeof r),
                     (long long)m->mismatches, (long long)m->count,
                     report_fmt(m->mismatch_frac, f, sizeof f));
    if (k >= 0 && (size_t)k < n && m->worst_index >= 0)
        k += snprintf(buf + k, n - (size_t)k, ", worst at index %lld: expected %s, got %s",
                      (long long)m->worst_index, report_fmt(m->worst_expected, we, sizeof we),
                      report_fmt(m->worst_actual, wa, sizeof wa));
    if (k >= 0 && (size_t)k < n)
        snprintf(
            buf + k, n - (size_t)k, "; needed rtol %s or atol %s (tolerance rtol %s, atol %s)%s%s",
            report_fmt(m->needed_rtol, nr, sizeof nr), report_fmt(m->needed_atol, na, sizeof na),
            report_fmt(m->tol.rtol, tr, sizeof tr), report_fmt(m->tol.atol, ta, sizeof ta),
            m->shape_ok ? "" : "; shape differs", m->dtype_ok ? "" : "; dtype differs");
    return buf;
}
