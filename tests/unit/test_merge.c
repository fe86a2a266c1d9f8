/*
 * test_merge.c — merge's rules (merge.h) and the name tables they read
 * documents through: the merged verdict, failing fixtures, the cause entry
 * kept, and the from_name functions of verdicts, fixture statuses,
 * confidences and lint severities.
 */
#include <string.h>

#include "onnxparity/causes.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/merge.h"
#include "testhelp.h"

static void test_merged_verdict(void)
{
    const char *pass2[] = {"pass", "pass"};
    CHECK(onp_merge_verdict(pass2, 2, 0) == ONP_RUN_PASS);
    CHECK(onp_run_exit_code(onp_merge_verdict(pass2, 2, 0)) == ONP_EXIT_PASS);
    /* a merged fixture that failed fails the whole, whatever the shards said */
    CHECK(onp_merge_verdict(pass2, 2, 1) == ONP_RUN_FAIL);
    const char *one_fail[] = {"pass", "fail"};
    CHECK(onp_merge_verdict(one_fail, 2, 0) == ONP_RUN_FAIL);
    CHECK(onp_run_exit_code(onp_merge_verdict(one_fail, 2, 0)) == ONP_EXIT_FAIL);
    /* error beats fail; an absent verdict is an error (that run did not finish) */
    const char *err[] = {"fail", "error"};
    CHECK(onp_merge_verdict(err, 2, 3) == ONP_RUN_ERROR);
    CHECK(onp_run_exit_code(onp_merge_verdict(err, 2, 3)) == ONP_EXIT_RUNTIME);
    const char *absent[] = {"pass", NULL};
    CHECK(onp_merge_verdict(absent, 2, 0) == ONP_RUN_ERROR);
    /* an unknown name counts for neither; names are exact */
    const char *odd[] = {"pass", "bogus", "FAIL"};
    CHECK(onp_merge_verdict(odd, 3, 0) == ONP_RUN_PASS);
    CHECK(onp_merge_verdict(odd, 3, 2) == ONP_RUN_FAIL);
    CHECK(onp_merge_verdict(NULL, 0, 0) == ONP_RUN_PASS);
}

static void test_fixture_failed(void)
{
    CHECK(onp_merge_fixture_failed("pass") == 0);
    CHECK(onp_merge_fixture_failed("fail") == 1);
    CHECK(onp_merge_fixture_failed("error") == 1);
    CHECK(onp_merge_fixture_failed(NULL) == 1);
    CHECK(onp_merge_fixture_failed("PASS") == 1);
    onp_fixture_status s;
    CHECK(!onp_fixture_status_from_name("error", &s) && s == ONP_FIXTURE_ERROR);
    CHECK(onp_fixture_status_from_name("errors", &s) == -1);
}

static void test_cause_outranks(void)
{
    CHECK(onp_merge_cause_outranks("high", "medium") == 1);
    CHECK(onp_merge_cause_outranks("medium", "low") == 1);
    CHECK(onp_merge_cause_outranks("low", "high") == 0);
    CHECK(onp_merge_cause_outranks("high", "high") == 0); /* the first of equals stays */
    CHECK(onp_merge_cause_outranks("bogus", "low") == 0); /* unknown ranks as low */
    CHECK(onp_merge_cause_outranks("low", NULL) == 1);    /* absent ranks below all */
    CHECK(onp_merge_cause_outranks(NULL, "bogus") == 0);
    onp_confidence c;
    for (int k = 0; k < ONP_CONFIDENCE_COUNT; k++)
        CHECK(!onp_confidence_from_name(onp_confidence_name((onp_confidence)k), &c) && (int)c == k);
    CHECK(onp_confidence_from_name("High", &c) == -1 && onp_confidence_from_name(NULL, &c) == -1);
    onp_lint_severity sv;
    for (int k = 0; k < ONP_LINT_SEVERITY_COUNT; k++)
        CHECK(!onp_lint_severity_from_name(onp_lint_severity_name((onp_lint_severity)k), &sv) &&
              (int)sv == k);
    CHECK(onp_lint_severity_from_name("fatal", &sv) == -1);
}

TEST_MAIN(test_merged_verdict, test_fixture_failed, test_cause_outranks)
