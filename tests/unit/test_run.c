/*
 * test_run.c — the run layer (run.h) without ONNX Runtime: the verdict
 * table and its exit codes, the verdict of judged fixtures, the one bisect
 * plan, and the bundle opened once (fixtures, parity.json and what derives
 * from it, the model's hash across a fork).  The run itself (onp_run over a
 * session) is exercised by every command test in tests/py.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnxparity/run.h"
#include "testhelp.h"

static void test_verdict_names(void)
{
    for (int v = 0; v < ONP_RUN_VERDICT_COUNT; v++) {
        onp_run_verdict back = ONP_RUN_VERDICT_COUNT;
        CHECK(onp_run_verdict_from_name(onp_run_verdict_name((onp_run_verdict)v), &back) == 0);
        CHECK(back == (onp_run_verdict)v);
    }
    onp_run_verdict x;
    CHECK(!strcmp(onp_run_verdict_name(ONP_RUN_PASS), "pass"));
    CHECK(!strcmp(onp_run_verdict_name(ONP_RUN_FAIL), "fail"));
    CHECK(!strcmp(onp_run_verdict_name(ONP_RUN_ERROR), "error"));
    CHECK(!strcmp(onp_run_verdict_name(ONP_RUN_VERDICT_COUNT), "?"));
    CHECK(onp_run_verdict_from_name("FAIL", &x) == -1); /* names are exact */
    CHECK(onp_run_verdict_from_name(NULL, &x) == -1);
    CHECK(onp_run_verdict_from_name("", &x) == -1);
}

/* The documented exit codes (docs/cli.md), and the error codes beside them. */
static void test_exit_codes(void)
{
    CHECK(onp_run_exit_code(ONP_RUN_PASS) == 0);
    CHECK(onp_run_exit_code(ONP_RUN_FAIL) == 1);
    CHECK(onp_run_exit_code(ONP_RUN_ERROR) == 4);
    onp_error e = {.code = ONP_ERR_USAGE};
    CHECK(onp_error_exit_code(&e) == ONP_EXIT_USAGE);
    e.code = ONP_ERR_FORMAT;
    CHECK(onp_error_exit_code(&e) == ONP_EXIT_IO);
    e.code = ONP_ERR_RUNTIME;
    CHECK(onp_error_exit_code(&e) == ONP_EXIT_RUNTIME);
}

static void test_verdict_of(void)
{
    onp_fixture_verdict f[3];
    memset(f, 0, sizeof f);
    CHECK(onp_run_verdict_of(f, 3, 0) == ONP_RUN_PASS);
    CHECK(onp_run_verdict_of(f, 0, 0) == ONP_RUN_PASS);
    CHECK(onp_run_verdict_of(f, 3, 1) == ONP_RUN_FAIL); /* a lint error fails agreeing numbers */
    f[1].status = ONP_FIXTURE_FAIL;
    CHECK(onp_run_verdict_of(f, 3, 0) == ONP_RUN_FAIL);
    f[2].status = ONP_FIXTURE_ERROR; /* refused by ORT: a failed fixture, not a lost one */
    CHECK(onp_run_verdict_of(f, 3, 0) == ONP_RUN_FAIL);
    f[2].runtime = "crashed"; /* lost: the run's verdict is error whatever else failed */
    CHECK(onp_run_verdict_of(f, 3, 1) == ONP_RUN_ERROR);
    onp_lint_result lr;
    memset(&lr, 0, sizeof lr);
    CHECK(onp_run_verdict_of_lint(&lr) == ONP_RUN_PASS);
    lr.counts[ONP_LINT_WARNING] = 3;
    CHECK(onp_run_verdict_of_lint(&lr) == ONP_RUN_PASS);
    lr.counts[ONP_LINT_ERROR] = 1;
    CHECK(onp_run_verdict_of_lint(&lr) == ONP_RUN_FAIL);
    CHECK(onp_run_verdict_of_baseline(ONP_BASELINE_REGRESSED) == ONP_RUN_FAIL);
    CHECK(onp_run_verdict_of_baseline(ONP_BASELINE_MIXED) == ONP_RUN_FAIL);
    CHECK(onp_run_verdict_of_baseline(ONP_BASELINE_IMPROVED) == ONP_RUN_PASS);
}

/* The verdicts of the other results the tool reports: compare, sweep, and
 * a document's name (report, a job over several documents). */
static void test_verdict_of_results(void)
{
    CHECK(onp_run_verdict_of_compare(0) == ONP_RUN_PASS);
    CHECK(onp_run_verdict_of_compare(2) == ONP_RUN_FAIL);
    onp_sweep_config cfg[2];
    memset(cfg, 0, sizeof cfg);
    onp_sweep_result sw;
    memset(&sw, 0, sizeof sw);
    sw.configs = cfg;
    sw.n_configs = 2;
    CHECK(onp_run_verdict_of_sweep(&sw) == ONP_RUN_ERROR); /* loaded nowhere */
    CHECK(onp_run_exit_code(onp_run_verdict_of_sweep(&sw)) == ONP_EXIT_RUNTIME);
    cfg[1].available = 1; /* one provider runs and fails; the other is absent */
    CHECK(onp_run_verdict_of_sweep(&sw) == ONP_RUN_FAIL);
    cfg[1].pass = 1;
    CHECK(onp_run_verdict_of_sweep(&sw) == ONP_RUN_PASS);
    onp_run_verdict v;
    CHECK(!onp_run_verdict_of_doc("fail", &v) && v == ONP_RUN_FAIL);
    CHECK(!onp_run_verdict_of_doc("agrees", &v) && v == ONP_RUN_PASS);
    CHECK(!onp_run_verdict_of_doc("diverges", &v) && v == ONP_RUN_FAIL);
    CHECK(onp_run_verdict_of_doc("inconclusive", &v) == -1);
    CHECK(onp_run_verdict_of_doc(NULL, &v) == -1);
    const char *page[] = {"pass", "inconclusive", "diverges", NULL};
    CHECK(onp_run_verdict_of_docs(page, 4) == ONP_RUN_FAIL);
    const char *lost[] = {"error", "fail"};
    CHECK(onp_run_verdict_of_docs(lost, 2) == ONP_RUN_ERROR);
    CHECK(onp_run_verdict_of_docs(page, 2) == ONP_RUN_PASS); /* unknown words decide nothing */
    CHECK(onp_run_verdict_of_docs(NULL, 0) == ONP_RUN_PASS);
    onp_adequacy_verdict a;
    CHECK(!onp_adequacy_verdict_from_name("adequate", &a) && a == ONP_ADEQUACY_ADEQUATE);
    CHECK(onp_adequacy_verdict_from_name("Adequate", &a) == -1);
}

/* One plan from one option set: what check, gate and diagnose hand bisect. */
static void test_bisect_plan(void)
{
    onp_run_opts o;
    onp_run_opts_init(&o);
    o.rtol = 1e-3;
    o.atol = 1e-5;
    o.strict = 1;
    o.no_estimate = 1;
    o.save_repro = "repro";
    onp_bundle_spec bundle = {.bundle = "b"};
    onp_bisect_opts bo;
    onp_run_bisect_plan(&bundle, &o, &bo);
    CHECK(bo.rtol == 1e-3 && bo.atol == 1e-5 && bo.strict == 1 && bo.no_noise == 1);
    CHECK(bo.fixture == -1 && bo.reference == ONP_BISECT_REF_AUTO);
    CHECK(bo.save_repro && !strcmp(bo.save_repro, "repro"));
    CHECK(bo.model == NULL && bo.data == NULL && bo.n_data == 0);
    /* at opt-level disable a disable reference would compare a run with itself */
    o.session.opt_level = ONP_ORT_OPT_DISABLE;
    onp_run_bisect_plan(&bundle, &o, &bo);
    CHECK(bo.reference == ONP_BISECT_REF_EAGER);
    o.reference = ONP_BISECT_REF_DISABLE; /* asked for explicitly: kept */
    onp_run_bisect_plan(&bundle, &o, &bo);
    CHECK(bo.reference == ONP_BISECT_REF_DISABLE);
    const char *dirs[] = {"d1", "d2"};
    onp_bundle_spec loose = {.model = "m.onnx", .data = dirs, .n_data = 2};
    onp_run_bisect_plan(&loose, &o, &bo);
    CHECK(bo.model && !strcmp(bo.model, "m.onnx") && bo.data == dirs && bo.n_data == 2);
}

static void test_bundle_errors(void)
{
    onp_bundle *b = (onp_bundle *)1;
    onp_error e;
    onp_error_clear(&e);
    onp_bundle_spec none = {.bundle = "tests/unit/no-such-bundle"};
    CHECK(onp_bundle_open(&none, &b, &e) == -1 && b == NULL);
    CHECK(onp_error_exit_code(&e) == ONP_EXIT_IO);
    /* a folder without fixtures: nothing to compare (exit 2), before the model is read */
    char dir[] = "/tmp/onp_test_run_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    onp_bundle_spec empty = {.bundle = dir};
    onp_error_clear(&e);
    CHECK(onp_bundle_open(&empty, &b, &e) == -1 && b == NULL);
    CHECKF(e.code == ONP_ERR_USAGE, "%d %s", e.code, e.msg);
    rmdir(dir);
    onp_bundle_spec half = {.model = "m.onnx"}; /* a model without folders */
    onp_error_clear(&e);
    CHECK(onp_bundle_open(&half, &b, &e) == -1 && e.code == ONP_ERR_USAGE);
    onp_bundle_close(NULL);
}

/* The shipped training example: parity.json read once, what derives from
 * it, and the model's hash the same whether or not a fork started it. */
static void test_bundle_open(void)
{
    onp_bundle_spec sp = {.bundle = "examples/training"};
    onp_bundle *b;
    onp_error e;
    onp_error_clear(&e);
    if (onp_bundle_open(&sp, &b, &e)) {
        CHECKF(0, "%s", e.msg);
        return;
    }
    CHECK(!strcmp(onp_bundle_dir(b), "examples/training"));
    CHECK(!strcmp(onp_bundle_model_path(b), "examples/training/model.onnx"));
    size_t n;
    const char *const *data = onp_bundle_data(b, &n);
    CHECK(n == 1 && !strcmp(data[0], "examples/training"));
    CHECK(onp_bundle_fixtures(b)->n == 3);
    CHECK(onp_bundle_manifest(b) != NULL);
    CHECK(onp_bundle_noise(b) != NULL);
    CHECK(onp_bundle_traced_fixture(b) == 1); /* export_args.traced_fixture */
    onp_bundle_spec w = onp_bundle_where(b);
    CHECK(w.bundle && !strcmp(w.bundle, "examples/training") && w.n_data == 1);
    char want[65];
    onp_model_sha256(onp_bundle_model(b), want);
    pid_t pid = fork(); /* the hash thread starts after a fork */
    if (pid == 0) _exit(0);
    int st;
    waitpid(pid, &st, 0);
    CHECK(!strcmp(onp_bundle_sha256(b), want));
    CHECK(!strcmp(onp_bundle_sha256(b), want)); /* settled: asked twice */
    onp_bundle_close(b);
    /* a second bundle closed without asking for its hash: no thread left
     * reading a closed model (ASan and valgrind see it) */
    CHECK(onp_bundle_open(&sp, &b, &e) == 0);
    pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, &st, 0);
    onp_bundle_close(b);
    /* a model and a folder of fixtures: no parity.json, an empty noise book */
    const char *dirs[] = {"examples/healthy"};
    onp_bundle_spec loose = {.model = "examples/healthy/model.onnx", .data = dirs, .n_data = 1};
    CHECK(onp_bundle_open(&loose, &b, &e) == 0);
    CHECK(onp_bundle_dir(b) == NULL && onp_bundle_manifest(b) == NULL);
    CHECK(onp_bundle_noise(b) != NULL && onp_bundle_adequacy(b) == NULL);
    CHECK(onp_bundle_traced_fixture(b) == -1);
    CHECK(strlen(onp_bundle_sha256(b)) == 64);
    onp_bundle_close(b);
}

TEST_MAIN(test_verdict_names, test_exit_codes, test_verdict_of, test_verdict_of_results,
          test_bisect_plan, test_bundle_errors, test_bundle_open)
