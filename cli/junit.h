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

#include "onnxparity/agreement.h"
#include "onnxparity/buf.h"
#include "onnxparity/compare.h"
#include "onnxparity/env.h"
#include "onnxparity/error.h"

/* JUNIT_WARN is a passing case whose <system-out> carries the text (JUnit
 * has no warning state; readers show system-out beside the case). */
typedef enum { JUNIT_PASS = 0, JUNIT_FAIL, JUNIT_ERROR, JUNIT_WARN } junit_status;

typedef struct junit {
    onp_buf body;  /* the <testcase> elements written so far */
    onp_buf props; /* the <property> elements */
    long tests, failures, errors;
    double time;     /* seconds given to the next cases (junit_set_time) */
    double time_sum; /* the suite's time: the sum over the cases */
    char **ids;      /* [cap_ids] open-addressing set of "classname\x1fname" */
    size_t n_ids, cap_ids;
} junit;

void junit_init(junit *j);

/* Append one testcase.  `message` (one line) and `text` (any length) are
 * used for failures, errors and warnings and may be NULL; every string is
 * escaped.  Ids stay unique: a (classname, name) pair already written gets
 * " #2", " #3", ... appended to its name. */
void junit_case(junit *j, const char *classname, const char *name, junit_status st,
                const char *message, const char *text);

/* The testcase carrying the top-1 flip-rate statistic (classname
 * "agreement"), the same in check's file and merge's; none when `a` counts
 * no rows. */
void junit_agreement_case(junit *j, const onp_agreement *a);

/* A monotonic clock in seconds, for the time attributes. */
double junit_clock(void);

/* The time attribute (seconds, >= 0) of the cases appended from now on. */
void junit_set_time(junit *j, double seconds);

/* One <property name value/> of the suite (the environment, the policy). */
void junit_property(junit *j, const char *name, const char *value);

/* One property per known field of the environment (env.h names), plus the
 * onnxparity version. */
void junit_env_properties(junit *j, const onp_env *env);

/* Write the document (<testsuites><testsuite name=suite ...>) to `path`
 * atomically.  0, or -1 with e filled (out of memory, I/O). */
int junit_write(junit *j, const char *suite, const char *path, onp_error *e);

/* Write a document holding one errored case, (classname "onnxparity",
 * name `what`): for a run that could not start, so that a CI upload step
 * still finds a file that says why.  Errors are not reported (the caller is
 * already failing with its own). */
void junit_write_error(const char *suite, const char *what, const char *why, const char *path);

/* Free the buffered cases; accepts a zeroed junit. */
void junit_free(junit *j);

/* Append the XML-escaped form of s to b (see the top of this file). */
void junit_escape(onp_buf *b, const char *s);

/* The metrics of a comparison as text for a failure: "max_abs A, max_rel R,
 * mismatches M/N (frac F), worst at index I: expected E, got G; needed rtol
 * R2 / atol A2 (tolerance rtol .., atol ..)".  Returns buf. */
char *junit_metrics_text(const onp_metrics *m, char *buf, size_t n);

#endif
