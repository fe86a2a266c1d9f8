/*
 * junit.h — JUnit XML for CI systems: one <testcase> per fixture x output,
 * failures carrying the metrics in their message and text.
 *
 * Every string that reaches the XML (suite, class and test names, messages)
 * is escaped here: the five XML specials become entities, control
 * characters XML 1.0 cannot hold become '?', valid UTF-8 (non-ASCII
 * included) is kept byte for byte, and invalid UTF-8 (overlong forms,
 * surrogates, truncated sequences, U+FFFE/U+FFFF) becomes U+FFFD.  The
 * document is built in memory and written atomically (temporary + rename).
 *
 * Usage:
 *     junit j; junit_init(&j);
 *     junit_case(&j, "test_data_set_0", "logits", JUNIT_FAIL, "max_abs 3e-2 > ...", details);
 *     if (junit_write(&j, "onnxparity check", "out.xml", &e)) report e;
 *     junit_free(&j);
 */
#ifndef ONP_CLI_JUNIT_H
#define ONP_CLI_JUNIT_H

#include <stddef.h>

#include "onnxparity/buf.h"
#include "onnxparity/compare.h"
#include "onnxparity/error.h"

typedef enum { JUNIT_PASS = 0, JUNIT_FAIL, JUNIT_ERROR } junit_status;

typedef struct junit {
    onp_buf body; /* the <testcase> elements written so far */
    long tests, failures, errors;
} junit;

void junit_init(junit *j);

/* Append one testcase.  `message` (one line) and `text` (any length) are
 * used for failures and errors and may be NULL; every string is escaped. */
void junit_case(junit *j, const char *classname, const char *name, junit_status st,
                const char *message, const char *text);

/* Write the document (<testsuites><testsuite name=suite ...>) to `path`
 * atomically.  0, or -1 with e filled (out of memory, I/O). */
int junit_write(junit *j, const char *suite, const char *path, onp_error *e);

/* Free the buffered cases; accepts a zeroed junit. */
void junit_free(junit *j);

/* Append the XML-escaped form of s to b (see the top of this file). */
void junit_escape(onp_buf *b, const char *s);

/* The metrics of a comparison as text for a failure: "max_abs A, max_rel R,
 * mismatches M/N (frac F), worst at index I: expected E, got G; needed rtol
 * R2 / atol A2 (tolerance rtol .., atol ..)".  Returns buf. */
char *junit_metrics_text(const onp_metrics *m, char *buf, size_t n);

#endif
