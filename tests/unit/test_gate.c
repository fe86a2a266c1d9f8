/*
 * test_gate.c — the gate's rules (gate.h) on hand-made runs: the criteria
 * parsed strictly; what --record records (the limit formula, shapes, lint
 * rules, top-1, the refusals); regressions judged with their numbers; the
 * drift policy; the verdict and its exit code.  No ONNX Runtime: the runs
 * are onp_fixture_verdict sets built here.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnxparity/agreement.h"
#include "onnxparity/gate.h"
#include "testhelp.h"

// --- a hand-made run -----------------------------------------------------------------

#define NFIX 3

/* Three fixtures of one output "y" (float32, shape [2, 4], then [4, 4]),
 * all passing, with float64-measured noise; a classifier's top-1 rows. */
typedef struct world {
    onp_fixture_verdict fix[NFIX];
    onp_output_verdict out[NFIX];
    onp_run_result run;
    onp_lint_result lint;
} world;

static void make_world(world *w)
{
    memset(w, 0, sizeof *w);
    static const double max_abs[NFIX] = {1e-6, 3e-6, 2e-6};
    static const double env[NFIX] = {4e-6, 2e-6, 1e-6};
    for (int i = 0; i < NFIX; i++) {
        onp_output_verdict *x = &w->out[i];
        snprintf(x->name, sizeof x->name, "y");
        x->compared = x->pass = 1;
        x->m.shape_ok = x->m.dtype_ok = x->m.pass = 1;
        x->m.tol = (onp_tol){1e-5, 1e-6};
        x->m.max_abs = max_abs[i];
        x->m.max_rel = 10 * max_abs[i];
        x->m.needed_atol = max_abs[i];
        x->m.needed_rtol = 1e-5 * (i + 1); /* worst: 1e-5 * 3 */
        x->m.mismatch_frac = i == 1 ? 0.25 : 0;
        x->j.verdict = i == 1 ? ONP_VERDICT_WITHIN_NOISE : ONP_VERDICT_WITHIN_TOL;
        x->j.pass = 1;
        x->j.noise.src = i == 2 ? ONP_NOISE_SCALED : ONP_NOISE_FLOAT64;
        x->j.envelope_max = env[i];
        x->j.gap_max = max_abs[i];
        x->j.ratio = max_abs[i] / env[i];
        x->rank = 2;
        x->dims[0] = i == 2 ? 4 : 2;
        x->dims[1] = 4;
        x->has_topk = 1;
        x->tk.rows = 50;
        x->tk.top1_agree = 50;
        onp_fixture_verdict *f = &w->fix[i];
        snprintf(f->dir, sizeof f->dir, "bundle/test_data_set_%d", i);
        f->index = i;
        f->status = ONP_FIXTURE_PASS;
        f->n_out = 1;
        f->outs = x;
    }
    w->run.fix = w->fix;
    w->run.n_fix = w->run.n_total = NFIX;
    onp_env_init(&w->run.env);
    onp_env_set(&w->run.env, ONP_ENV_ORT_VERSION, "1.29.0");
    onp_env_set(&w->run.env, ONP_ENV_MODEL_SHA256, "aaaaaaaaaaaaaaaaaaaa");
}

/* Record w as criteria with margin 2. */
static int record(const world *w, onp_criteria *c)
{
    onp_error e;
    onp_error_clear(&e);
    return onp_gate_record(&w->run, &w->lint, "abc123", 2.0, c, &e);
}

/* Judge w against c under policy p. */
static int judge(const world *w, const onp_criteria *c, onp_gate_drift_policy p, onp_gate_result *g)
{
    onp_error e;
    onp_error_clear(&e);
    return onp_gate_judge(c, &w->run, &w->lint, p, g, &e);
}

/* The regression of `check`, or NULL. */
static const onp_gate_regression *find_reg(const onp_gate_result *g, const char *check)
{
    for (size_t i = 0; i < g->n_reg; i++)
        if (!strcmp(g->reg[i].check, check)) return &g->reg[i];
    return NULL;
}

// --- record --------------------------------------------------------------------------------

/* The limit formula: worst measured x margin, floored by the largest noise
 * envelope; needed_rtol x margin; top-1 and the shapes as measured. */
static void test_record_limits(void)
{
    world w;
    make_world(&w);
    onp_criteria c;
    CHECK(record(&w, &c) == 0);
    CHECK(c.fixtures == NFIX && c.margin == 2 && c.has_env && !strcmp(c.model_sha256, "abc123"));
    CHECK(c.n_lint == onp_lint_rule_count()); /* no finding: every rule recorded clean */
    CHECK(c.n_out == 1);
    const onp_crit_out *o = onp_criteria_find(&c, "y");
    CHECK(o != NULL);
    if (!o) return;
    CHECK(o->rtol == 1e-5 && o->atol == 1e-6);
    /* max_abs: worst 3e-6 x 2 = 6e-6 beats the envelope floor 4e-6 */
    CHECKF(o->max_abs == fmax(3e-6 * 2, 4e-6), "%g", o->max_abs);
    /* needed_atol: worst 3e-6 x 2 = 6e-6, same floor */
    CHECK(o->needed_atol == fmax(3e-6 * 2, 4e-6));
    CHECK(o->needed_rtol == 1e-5 * 3 * 2);                                 /* no floor */
    CHECK(o->envelope_max == 4e-6 && o->noise_source == ONP_NOISE_SCALED); /* the weakest */
    CHECK(o->mismatch_frac_max == 0.25);
    CHECK(o->top1_min == 1 && o->max_flip_rate > 0 && o->max_flip_rate < 0.1);
    CHECK(o->flip_confidence == ONP_AGREEMENT_CONFIDENCE);
    CHECK(o->quiet_change_max == 0);
    CHECK(o->n_shapes == 2 && o->rank[0] == 2 && o->dims[0][0] == 2 && o->dims[1][0] == 4);
    CHECK(o->measured_max_abs == 3e-6 && o->measured_needed_rtol == 1e-5 * 3);
    onp_criteria_free(&c);

    /* an envelope above margin x measured: the limit is the envelope */
    w.out[0].j.envelope_max = 1e-3;
    CHECK(record(&w, &c) == 0);
    CHECK(c.outs[0].max_abs == 1e-3 && c.outs[0].needed_atol == 1e-3);
    onp_criteria_free(&c);

    /* no noise estimate anywhere: measured x margin alone, no envelope */
    for (int i = 0; i < NFIX; i++) w.out[i].j.noise.src = ONP_NOISE_NONE;
    w.out[1].m.needed_rtol = INFINITY; /* an exact zero differs: no rtol limit */
    w.out[2].has_topk = 0;
    w.out[0].has_topk = w.out[1].has_topk = 0;
    CHECK(record(&w, &c) == 0);
    CHECK(c.outs[0].max_abs == 6e-6 && c.outs[0].envelope_max < 0);
    CHECK(c.outs[0].needed_rtol < 0 && isinf(c.outs[0].measured_needed_rtol));
    CHECK(c.outs[0].top1_min < 0 && c.outs[0].max_flip_rate < 0);
    onp_criteria_free(&c);
}

/* The document --record writes reads back as the same criteria. */
static void test_record_document(void)
{
    world w;
    make_world(&w);
    onp_criteria c, back;
    onp_error e;
    onp_error_clear(&e);
    CHECK(record(&w, &c) == 0);
    cJSON *doc = onp_criteria_to_json(&c);
    CHECK(doc != NULL);
    char *txt = cJSON_PrintUnformatted(doc);
    CHECK(txt && onp_criteria_parse(txt, strlen(txt), "c.json", &back, &e) == 0);
    CHECK(back.n_out == 1 && back.fixtures == NFIX && back.n_lint == c.n_lint);
    if (back.n_out == 1) {
        const onp_crit_out *a = &c.outs[0], *b = &back.outs[0];
        CHECK(a->max_abs == b->max_abs && a->needed_rtol == b->needed_rtol &&
              a->needed_atol == b->needed_atol && a->envelope_max == b->envelope_max);
        CHECK(a->top1_min == b->top1_min && a->max_flip_rate == b->max_flip_rate);
        CHECK(a->n_shapes == b->n_shapes && a->quiet_change_max == b->quiet_change_max);
        CHECK(b->measured_max_abs < 0); /* what was measured is not read back */
    }
    CHECK(back.has_env && !strcmp(back.env.v[ONP_ENV_ORT_VERSION], "1.29.0"));
    cJSON *m = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "outputs"), "y"),
        "noise_source");
    CHECK(cJSON_IsString(m) && !strcmp(m->valuestring, "float64-scaled"));
    free(txt);
    cJSON_Delete(doc);
    onp_criteria_free(&back);
    onp_criteria_free(&c);
}

/* A run that does not run, fails, or has lint errors is no baseline. */
static void test_recordable(void)
{
    world w;
    make_world(&w);
    onp_gate_refusal_why why;
    CHECK(onp_gate_recordable(&w.run, &w.lint, 0, &why) == ONP_RUN_PASS);
    CHECK(why.why == ONP_GATE_RECORDABLE);
    w.fix[1].status = ONP_FIXTURE_FAIL;
    w.out[1].pass = 0;
    CHECK(onp_gate_recordable(&w.run, &w.lint, 0, &why) == ONP_RUN_FAIL);
    CHECK(why.why == ONP_GATE_REFUSE_FAILING && why.failing == 1 && why.fixture == &w.fix[1] &&
          why.output == &w.out[1]);
    CHECK(onp_run_exit_code(ONP_RUN_FAIL) == ONP_EXIT_FAIL);
    CHECK(onp_gate_recordable(&w.run, &w.lint, 1, &why) == ONP_RUN_PASS); /* on purpose */
    w.fix[2].status = ONP_FIXTURE_ERROR; /* nothing to measure, even on purpose */
    CHECK(onp_gate_recordable(&w.run, &w.lint, 1, &why) == ONP_RUN_FAIL);
    CHECK(why.why == ONP_GATE_REFUSE_NOT_RUNNING && why.fixture == &w.fix[2]);
    make_world(&w);
    onp_lint_finding f = {.rule = NULL};
    for (size_t k = 0; k < onp_lint_rule_count() && !f.rule; k++)
        if (onp_lint_rule_at(k)->severity == ONP_LINT_ERROR) f.rule = onp_lint_rule_at(k);
    CHECK(f.rule != NULL);
    w.lint.findings = &f;
    w.lint.n = 1;
    w.lint.counts[ONP_LINT_ERROR] = 1;
    CHECK(onp_gate_recordable(&w.run, &w.lint, 0, &why) == ONP_RUN_FAIL);
    CHECK(why.why == ONP_GATE_REFUSE_LINT && why.finding == &f && why.lint_errors == 1);
    onp_criteria c;
    CHECK(record(&w, &c) == 0); /* recorded anyway (--allow-failing): that rule is not clean */
    CHECK(c.n_lint == onp_lint_rule_count() - 1);
    for (size_t k = 0; k < c.n_lint; k++) CHECK(strcmp(c.lint[k], f.rule->id));
    onp_criteria_free(&c);
}

// --- judge ---------------------------------------------------------------------------------

/* The run the criteria were recorded from passes them; a later run whose
 * max_abs grew past the limit regresses with the numbers. */
static void test_judge_regression(void)
{
    world w;
    make_world(&w);
    onp_criteria c;
    onp_gate_result g;
    CHECK(record(&w, &c) == 0);
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECKF(g.n_reg == 0, "%zu: %s", g.n_reg, g.n_reg ? g.reg[0].msg : "");
    CHECK(g.verdict == ONP_RUN_PASS && onp_run_exit_code(g.verdict) == ONP_EXIT_PASS);
    CHECK(g.n_checks > 0);
    onp_gate_result_release(&g);

    w.out[2].m.max_abs = 7e-6; /* limit 6e-6 */
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    const onp_gate_regression *x = find_reg(&g, "max_abs");
    CHECK(x != NULL && g.n_reg == 1);
    if (x) {
        CHECK(x->value == 7e-6 && x->limit == 6e-6);
        CHECK(x->fixture && !strcmp(x->fixture, "test_data_set_2"));
        CHECK(x->output && !strcmp(x->output, "y"));
        CHECKF(!strcmp(x->msg, "y: max_abs 7e-06 > recorded limit 6e-06 (test_data_set_2)"), "%s",
               x->msg);
    }
    int found = 0; /* the check keeps the worst value and says it regressed */
    for (size_t i = 0; i < g.n_checks; i++)
        if (!strcmp(g.checks[i].check, "max_abs")) {
            found = 1;
            CHECK(g.checks[i].measured == 7e-6 && g.checks[i].limit == 6e-6 &&
                  g.checks[i].regressed && !g.checks[i].floor);
        }
    CHECK(found);
    CHECK(g.verdict == ONP_RUN_FAIL && onp_run_exit_code(g.verdict) == ONP_EXIT_FAIL);
    onp_gate_result_release(&g);

    /* NaN is beyond any limit */
    w.out[2].m.max_abs = NAN;
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(find_reg(&g, "max_abs") && isnan(find_reg(&g, "max_abs")->value));
    onp_gate_result_release(&g);

    /* fewer fixtures, a missing output, a flipped label */
    make_world(&w);
    w.run.n_fix = 2;
    snprintf(w.out[1].name, sizeof w.out[1].name, "z");
    w.out[0].tk.top1_agree = 40;
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(find_reg(&g, "fixtures") && find_reg(&g, "fixtures")->value == 2 &&
          find_reg(&g, "fixtures")->limit == NFIX);
    CHECK(find_reg(&g, "top1") && find_reg(&g, "top1")->value == 0.8);
    CHECK(find_reg(&g, "flip_rate") != NULL);
    /* [2, 4] is there; [4, 4] was fixture 2's only */
    CHECKF(find_reg(&g, "shapes") && !strcmp(find_reg(&g, "shapes")->item, "[4, 4]"), "%s",
           find_reg(&g, "shapes") ? find_reg(&g, "shapes")->item : "none");
    onp_gate_result_release(&g);
    snprintf(w.out[0].name, sizeof w.out[0].name, "z"); /* and now y is gone */
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(find_reg(&g, "missing") && !strcmp(find_reg(&g, "missing")->output, "y"));
    onp_gate_result_release(&g);

    /* ORT lost a fixture: the verdict is error whatever regressed */
    make_world(&w);
    w.fix[1].status = ONP_FIXTURE_ERROR;
    w.fix[1].runtime = "crashed";
    snprintf(w.fix[1].msg, sizeof w.fix[1].msg, "the worker crashed");
    w.run.lost = 1;
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(find_reg(&g, "error") != NULL && g.lost == 1);
    CHECK(g.verdict == ONP_RUN_ERROR && onp_run_exit_code(g.verdict) == ONP_EXIT_RUNTIME);
    onp_gate_result_release(&g);
    onp_criteria_free(&c);
}

/* With an envelope recorded, mismatches inside the noise are no
 * regression; a value beyond its noise is. */
static void test_judge_noise(void)
{
    world w;
    make_world(&w);
    onp_criteria c;
    onp_gate_result g;
    for (int i = 0; i < NFIX; i++) w.out[i].m.mismatch_frac = 0;
    CHECK(record(&w, &c) == 0);
    w.out[1].m.mismatch_frac = 0.5; /* within noise: not judged against mismatch_frac_max */
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(g.n_reg == 0);
    onp_gate_result_release(&g);
    w.out[0].m.mismatch_frac = 0.5; /* within tolerance verdict: judged */
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(g.n_reg == 1 && find_reg(&g, "mismatch_frac"));
    onp_gate_result_release(&g);
    make_world(&w);
    w.out[0].j.verdict = ONP_VERDICT_BEYOND_NOISE;
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    const onp_gate_regression *x = find_reg(&g, "noise");
    CHECK(x && x->value == 1e-6 && x->limit == 4e-6);
    onp_gate_result_release(&g);
    onp_criteria_free(&c);
}

// --- the environment ---------------------------------------------------------------------

/* A runtime drift warns by default and regresses under the fail policy;
 * a new model hash is a note under both. */
static void test_drift_policy(void)
{
    world w;
    make_world(&w);
    onp_criteria c;
    onp_gate_result g;
    CHECK(record(&w, &c) == 0);
    onp_env_set(&w.run.env, ONP_ENV_ORT_VERSION, "1.30.0");
    onp_env_set(&w.run.env, ONP_ENV_MODEL_SHA256, "bbbbbbbbbbbbbbbbbbbb");
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_WARN, &g) == 0);
    CHECK(g.n_drift == 2 && g.n_reg == 0 && g.verdict == ONP_RUN_PASS);
    for (size_t i = 0; i < g.n_drift; i++) {
        onp_drift_effect f = onp_gate_drift_effect(&g.drift[i], g.policy);
        if (g.drift[i].field == ONP_ENV_ORT_VERSION) CHECK(f == ONP_DRIFT_EFFECT_WARNING);
        if (g.drift[i].field == ONP_ENV_MODEL_SHA256) CHECK(f == ONP_DRIFT_EFFECT_NOTE);
    }
    char t[900];
    onp_gate_drift_text(&g.drift[1], t, sizeof t);
    CHECKF(!strcmp(t, "model_sha256: aaaaaaaaaaaa at record time, bbbbbbbbbbbb now"), "%s", t);
    onp_gate_result_release(&g);
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_FAIL, &g) == 0);
    const onp_gate_regression *x = find_reg(&g, "environment");
    CHECK(g.n_reg == 1 && x && !strcmp(x->item, "ort_version"));
    CHECK(x && strstr(x->msg, "1.29.0 at record time, 1.30.0 now"));
    CHECK(g.verdict == ONP_RUN_FAIL);
    onp_gate_result_release(&g);
    c.has_env = 0; /* criteria older than environments: nothing compared */
    CHECK(judge(&w, &c, ONP_GATE_DRIFT_FAIL, &g) == 0);
    CHECK(g.n_drift == 0 && g.n_reg == 0);
    onp_gate_result_release(&g);
    onp_criteria_free(&c);
    /* the names, both ways */
    onp_gate_drift_policy p;
    onp_drift_effect f;
    CHECK(!onp_gate_drift_policy_from_name("fail", &p) && p == ONP_GATE_DRIFT_FAIL);
    CHECK(!strcmp(onp_gate_drift_policy_name(ONP_GATE_DRIFT_WARN), "warn"));
    CHECK(onp_gate_drift_policy_from_name("FAIL", &p) == -1);
    CHECK(onp_gate_drift_policy_from_name(NULL, &p) == -1);
    CHECK(!onp_drift_effect_from_name("failure", &f) && f == ONP_DRIFT_EFFECT_FAILURE);
    CHECK(!strcmp(onp_drift_effect_name(ONP_DRIFT_EFFECT_NOTE), "note"));
    CHECK(!strcmp(onp_drift_effect_name(ONP_DRIFT_EFFECT_COUNT), "?"));
}

// --- the criteria ------------------------------------------------------------------------

static void test_criteria_parse(void)
{
    static const char good[] =
        "{\"schema\": \"onnxparity.criteria/1\", \"fixtures\": 2, \"lint_clean\": [],"
        " \"outputs\": {\"y\": {\"rtol\": 0.001, \"atol\": 1e-05, \"top1_min\": null,"
        " \"mismatch_frac_max\": 0, \"max_abs\": null, \"needed_rtol\": 1,"
        " \"needed_atol\": 0.5, \"shapes\": [[2, 4]]}}}";
    onp_criteria c;
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_criteria_parse(good, sizeof good - 1, "c.json", &c, &e) == 0);
    CHECK(c.n_out == 1 && c.fixtures == 2 && c.margin == 0 && !c.has_env);
    const onp_crit_out *o = onp_criteria_find(&c, "y");
    CHECK(o && o->top1_min < 0 && o->max_abs < 0 && o->needed_rtol == 1);
    CHECK(o && o->envelope_max < 0 && o->quiet_change_max < 0 && o->max_flip_rate < 0);
    CHECK(onp_criteria_find(&c, "z") == NULL && onp_criteria_find(NULL, "y") == NULL);
    /* the tolerance: the criteria's, else the dtype's with --rtol/--atol over it */
    onp_tol t = onp_gate_tol(&c, "y", 1, -1, -1);
    CHECK(t.rtol == 0.001 && t.atol == 1e-05);
    onp_tol d = onp_tol_default(1);
    t = onp_gate_tol(&c, "z", 1, -1, 0.5);
    CHECK(t.rtol == d.rtol && t.atol == 0.5);
    onp_gate_tol_ctx tc = {NULL, 0.25, -1};
    t = onp_gate_tol_fn(&tc, "y", 1); /* recording: no criteria */
    CHECK(t.rtol == 0.25 && t.atol == d.atol);
    onp_criteria_free(&c);
    CHECK(c.outs == NULL && c.n_out == 0);
    /* strict: the first problem names its field */
    static const char bad[] =
        "{\"schema\": \"onnxparity.criteria/1\", \"fixtures\": 2, \"lint_clean\": [],"
        " \"outputs\": {\"y\": {\"rtol\": -1}}}";
    CHECK(onp_criteria_parse(bad, sizeof bad - 1, "c.json", &c, &e) == -1);
    CHECKF(e.code == ONP_ERR_INPUT && !strcmp(e.field, "outputs.y.rtol"), "%s", e.field);
    CHECK(c.outs == NULL && c.lint == NULL);
    CHECK(onp_criteria_parse("{", 1, "c.json", &c, &e) == -1 && e.code == ONP_ERR_INPUT);
    CHECK(!strcmp(onp_gate_fixture_name("a/b/test_data_set_0"), "test_data_set_0"));
    CHECK(!strcmp(onp_gate_fixture_name("plain"), "plain"));
}

/* Criteria naming deployment targets (issue 29): each target's criteria
 * read with the field names prefixed by "targets[K].", the document
 * written back the same, --target specs; bad input names file and field. */
static void test_criteria_targets(void)
{
#define ONE                                                                                        \
    "\"fixtures\": 2, \"lint_clean\": [], \"outputs\": {\"y\": {\"rtol\": 0.001, "                 \
    "\"atol\": 1e-05, \"top1_min\": null, \"mismatch_frac_max\": 0, \"max_abs\": 0.5, "            \
    "\"needed_rtol\": 1, \"needed_atol\": 0.5, \"shapes\": [[2, 4]]}}"
    static const char good[] =
        "{\"schema\": \"onnxparity.criteria/1\", \"targets\": ["
        "{\"name\": \"tool\", \"ort_library\": null, " ONE "},"
        "{\"name\": \"deployed\", \"ort_library\": \"env\", \"opt_level\": \"disable\", " ONE "}]}";
    onp_criteria c, back;
    onp_error e;
    onp_error_clear(&e);
    CHECKF(onp_criteria_parse(good, sizeof good - 1, "c.json", &c, &e) == 0, "%s", e.msg);
    CHECK(c.n_targets == 2 && c.n_out == 0);
    if (c.n_targets == 2) {
        CHECK(!strcmp(c.targets[0].name, "tool") && !c.targets[0].ort_library[0] &&
              !c.targets[0].opt_level[0]);
        CHECK(!strcmp(c.targets[1].ort_library, "env") &&
              !strcmp(c.targets[1].opt_level, "disable"));
        CHECK(c.targets[1].crit.n_out == 1 && c.targets[1].crit.outs[0].max_abs == 0.5 &&
              c.targets[1].crit.n_targets == 0);
        /* written and read back: the same targets */
        cJSON *doc = onp_criteria_to_json(&c);
        char *txt = doc ? cJSON_PrintUnformatted(doc) : NULL;
        CHECK(txt && onp_criteria_parse(txt, strlen(txt), "c.json", &back, &e) == 0);
        CHECK(back.n_targets == 2 && !strcmp(back.targets[1].name, "deployed") &&
              !strcmp(back.targets[1].ort_library, "env") && back.targets[0].crit.fixtures == 2 &&
              back.targets[1].crit.n_out == 1);
        free(txt);
        cJSON_Delete(doc);
        onp_criteria_free(&back);
    }
    onp_criteria_free(&c);
    CHECK(c.targets == NULL && c.n_targets == 0);
    /* bad input: the first problem, its field named with the target's index */
    static const struct {
        const char *doc, *field, *says;
    } bad[] = {
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": []}", "targets", "1 to 8"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": {}}", "targets", "1 to 8"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [1]}", "targets[0]",
         "not an object"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"ort_library\": null, " ONE "}]}",
         "targets[0].name", "missing"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a b\", "
         "\"ort_library\": null, " ONE "}]}",
         "targets[0].name", "letters"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, " ONE "}, {\"name\": \"a\", \"ort_library\": null, " ONE "}]}",
         "targets[1].name", "another target"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", " ONE "}]}",
         "targets[0].ort_library", "missing"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": 3, " ONE "}]}",
         "targets[0].ort_library", "a path"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"opt_level\": \"fast\", " ONE "}]}",
         "targets[0].opt_level", "opt-level"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"fixtures\": 2, \"lint_clean\": [], \"outputs\": {\"y\": "
         "{\"rtol\": -1}}}]}",
         "targets[0].outputs.y.rtol", "finite"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"lint_clean\": [], \"outputs\": {}}]}",
         "targets[0].fixtures", "missing"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"fixtures\": 2, \"targets\": [{\"name\": "
         "\"a\", \"ort_library\": null, " ONE "}]}",
         "fixtures", "beside"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"margin\": 2, \"targets\": [{\"name\": "
         "\"a\", \"ort_library\": null, " ONE "}]}",
         "margin", "beside"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"targets\": [], " ONE "}]}",
         "targets[0].targets", "no targets"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        onp_error_clear(&e);
        CHECKF(onp_criteria_parse(bad[i].doc, strlen(bad[i].doc), "c.json", &c, &e) == -1,
               "case %zu", i);
        CHECKF(e.code == ONP_ERR_INPUT && !strcmp(e.file, "c.json") &&
                   !strcmp(e.field, bad[i].field) && strstr(e.msg, bad[i].says) &&
                   !strchr(e.msg, '\n'),
               "case %zu: field '%s' msg '%s'", i, e.field, e.msg);
        CHECK(c.targets == NULL && c.outs == NULL);
    }
    /* --target NAME=LIBRARY[@OPT_LEVEL] */
    onp_crit_target t;
    CHECK(onp_crit_target_parse("tool=bundled", &t, &e) == 0 && !strcmp(t.name, "tool") &&
          !t.ort_library[0] && !t.opt_level[0]);
    CHECK(onp_crit_target_parse("dep=env@disable", &t, &e) == 0 && !strcmp(t.ort_library, "env") &&
          !strcmp(t.opt_level, "disable"));
    CHECK(onp_crit_target_parse("x=/o/libonnxruntime.so.1", &t, &e) == 0 &&
          !strcmp(t.ort_library, "/o/libonnxruntime.so.1"));
    CHECK(onp_crit_target_parse("nolib", &t, &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECK(onp_crit_target_parse("=env", &t, &e) == -1);
    CHECK(onp_crit_target_parse("a b=env", &t, &e) == -1 && strstr(e.msg, "letters"));
    CHECK(onp_crit_target_parse("a=", &t, &e) == -1);
    CHECK(onp_crit_target_parse("a=env@fast", &t, &e) == -1 && strstr(e.msg, "'fast'"));
    CHECK(onp_crit_target_parse("a=bundled@", &t, &e) == -1);
    /* an '@' in the path: the library whole, or split at the last one */
    CHECK(onp_crit_target_parse("a=/opt/ort@1.23/lib/libonnxruntime.so", &t, &e) == 0 &&
          !strcmp(t.ort_library, "/opt/ort@1.23/lib/libonnxruntime.so") && !t.opt_level[0]);
    CHECK(onp_crit_target_parse("a=/opt/ort@1.23/lib/libonnxruntime.so@basic", &t, &e) == 0 &&
          !strcmp(t.ort_library, "/opt/ort@1.23/lib/libonnxruntime.so") &&
          !strcmp(t.opt_level, "basic"));
    CHECK(onp_crit_target_parse("a=/o/libort@2.so", &t, &e) == 0 &&
          !strcmp(t.ort_library, "/o/libort@2.so") && !t.opt_level[0]);
    /* gate's options: two or more targets, recording only, names unique */
    onp_gate_args ga;
    onp_run_args ra;
    onp_run_args_init(&ra);
    const char *argv1[] = {"gate", "--target", "a=env", "--target", "a=bundled"};
    int i = 1;
    onp_gate_args_init(&ga);
    CHECK(onp_gate_args_parse(&ga, &ra, 5, argv1, &i, &e) == 1 && ga.n_targets == 1);
    i = 3;
    CHECK(onp_gate_args_parse(&ga, &ra, 5, argv1, &i, &e) == -1 && strstr(e.msg, "another target"));
    ga.criteria = "c.json";
    ga.record = 1;
    CHECK(onp_gate_args_finish(&ga, &ra, &e) == -1 && strstr(e.msg, "two or more"));
    const char *argv2[] = {"gate", "--target=b=env"};
    i = 1;
    CHECK(onp_gate_args_parse(&ga, &ra, 2, argv2, &i, &e) == 1 && ga.n_targets == 2);
    CHECK(onp_gate_args_finish(&ga, &ra, &e) == 0);
    ga.record = 0;
    CHECK(onp_gate_args_finish(&ga, &ra, &e) == -1 && strstr(e.msg, "--record only"));
    /* a target's provider and its options */
    const char *argv3[] = {"gate",
                           "--target-provider",
                           "b=openvino",
                           "--target-provider-opt",
                           "b=load_config={\"CPU\":{}}",
                           "--target-provider-opt",
                           "a=k=v",
                           "--target-provider",
                           "zz=cuda"};
    i = 1;
    CHECK(onp_gate_args_parse(&ga, &ra, 9, argv3, &i, &e) == 1 && i == 2);
    i = 3;
    CHECK(onp_gate_args_parse(&ga, &ra, 9, argv3, &i, &e) == 1);
    CHECK(!strcmp(ga.targets[1].provider, "openvino") && ga.targets[1].n_provider_opts == 1 &&
          !strcmp(ga.targets[1].provider_opts[0], "load_config={\"CPU\":{}}"));
    i = 5; /* an option of a target without a provider */
    CHECK(onp_gate_args_parse(&ga, &ra, 9, argv3, &i, &e) == -1 && strstr(e.msg, "first"));
    i = 7; /* no such target */
    CHECK(onp_gate_args_parse(&ga, &ra, 9, argv3, &i, &e) == -1 &&
          strstr(e.msg, "NAME a --target"));
    i = 1; /* twice */
    CHECK(onp_gate_args_parse(&ga, &ra, 9, argv3, &i, &e) == -1 && strstr(e.msg, "already"));
    cJSON *pd = NULL;
    {
        onp_criteria w;
        memset(&w, 0, sizeof w);
        w.n_targets = ga.n_targets;
        w.targets = ga.targets;
        pd = onp_criteria_to_json(&w);
        char *txt = pd ? cJSON_PrintUnformatted(pd) : NULL;
        onp_criteria rb;
        memset(&rb, 0, sizeof rb);
        CHECK(txt && strstr(txt, "\"provider\":\"openvino\""));
        /* written and read back: the providers and their options */
        CHECK(txt && onp_criteria_parse(txt, strlen(txt), "c.json", &rb, &e) == 0 &&
              rb.n_targets == 2 && !rb.targets[0].provider[0] &&
              !strcmp(rb.targets[1].provider, "openvino") && rb.targets[1].n_provider_opts == 1 &&
              !strcmp(rb.targets[1].provider_opts[0], "load_config={\"CPU\":{}}"));
        onp_criteria_free(&rb);
        free(txt);
    }
    cJSON_Delete(pd);
    onp_gate_args_release(&ga);
    CHECK(ga.targets == NULL && ga.n_targets == 0);
    static const struct {
        const char *doc, *field, *says;
    } badp[] = {
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"provider_options\": [\"k=v\"], " ONE "}]}",
         "targets[0].provider_options", "without a provider"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"provider\": \"openvino\", \"provider_options\": [\"kv\"], " ONE
         "}]}",
         "targets[0].provider_options[0]", "KEY=VALUE"},
        {"{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
         "\"ort_library\": null, \"provider\": 1, " ONE "}]}",
         "targets[0].provider", "provider name"},
    };
    for (size_t k = 0; k < sizeof badp / sizeof badp[0]; k++) {
        CHECKF(onp_criteria_parse(badp[k].doc, strlen(badp[k].doc), "c.json", &c, &e) == -1 &&
                   !strcmp(e.field, badp[k].field) && strstr(e.msg, badp[k].says),
               "provider case %zu: %s %s", k, e.field, e.msg);
    }
    static const char goodp[] =
        "{\"schema\": \"onnxparity.criteria/1\", \"targets\": [{\"name\": \"a\", "
        "\"ort_library\": null, \"provider\": \"openvino\", \"provider_options\": [\"a=b=c\"], " ONE
        "}]}";
    CHECK(onp_criteria_parse(goodp, sizeof goodp - 1, "c.json", &c, &e) == 0 &&
          c.targets[0].n_provider_opts == 1 && !strcmp(c.targets[0].provider_opts[0], "a=b=c"));
    onp_criteria_free(&c);
#undef ONE
}

/* --record's JUnit failures: one "parity" entry per output that does not pass. */
static void test_record_failures(void)
{
    world w;
    make_world(&w);
    w.out[1].pass = 0;
    w.out[1].j.verdict = ONP_VERDICT_BEYOND_NOISE;
    onp_gate_result g;
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_gate_record_failures(&w.run, &g, &e) == 0);
    CHECK(g.n_reg == 1 && !strcmp(g.reg[0].check, "parity") && isnan(g.reg[0].value));
    CHECKF(g.n_reg && !strcmp(g.reg[0].msg, "y: beyond-noise (test_data_set_1)"), "%s",
           g.reg[0].msg);
    CHECK(g.verdict == ONP_RUN_FAIL);
    onp_gate_result_release(&g);
    CHECK(g.reg == NULL && g.n_reg == 0);
    onp_gate_result_release(NULL);
}

/* gate's own options: parsed by the library, --rtol/--atol through the
 * run's table, none without effect. */
static int parse_all(onp_gate_args *g, onp_run_args *a, int argc, const char *const *argv,
                     onp_error *e)
{
    onp_gate_args_init(g);
    onp_run_args_init(a);
    onp_error_clear(e);
    for (int i = 0; i < argc; i++) {
        int r = onp_gate_args_parse(g, a, argc, argv, &i, e);
        if (r <= 0) return r < 0 ? -1 : -2; /* -2: not a gate option */
    }
    return onp_gate_args_finish(g, a, e);
}

static void test_gate_args(void)
{
    static onp_run_args a; /* about 20 kB */
    onp_gate_args g;
    onp_error e;
    const char *rec[] = {"--criteria", "c.json", "--record",       "--margin=3",
                         "--rtol",     "1e-3",   "--allow-failing"};
    CHECK(parse_all(&g, &a, 7, rec, &e) == 0);
    CHECK(g.record && g.allow_failing && g.margin == 3 && !strcmp(g.criteria, "c.json"));
    CHECK(a.run.rtol == 1e-3 && a.run.atol < 0);
    const char *gating[] = {"--criteria=c.json", "--env-drift", "fail", "--no-bisect"};
    CHECK(parse_all(&g, &a, 4, gating, &e) == 0);
    CHECK(!g.record && g.drift == ONP_GATE_DRIFT_FAIL && g.no_bisect && g.margin == 2);
    /* no option without effect, each named */
    const char *margin_gating[] = {"--criteria", "c.json", "--margin", "3"};
    CHECK(parse_all(&g, &a, 4, margin_gating, &e) == -1 && e.code == ONP_ERR_USAGE &&
          strstr(e.msg, "--margin applies to --record only"));
    const char *atol_gating[] = {"--criteria", "c.json", "--atol", "0"};
    CHECK(parse_all(&g, &a, 4, atol_gating, &e) == -1 && strstr(e.msg, "--atol applies"));
    const char *drift_rec[] = {"--criteria", "c.json", "--record", "--env-drift", "warn"};
    CHECK(parse_all(&g, &a, 5, drift_rec, &e) == -1 &&
          strstr(e.msg, "--env-drift applies to gating only"));
    const char *none[] = {"--record"};
    CHECK(parse_all(&g, &a, 1, none, &e) == -1 && strstr(e.msg, "--criteria FILE"));
    /* bad values, missing values, and what is not gate's */
    const char *bad_margin[] = {"--margin", "0.5"};
    CHECK(parse_all(&g, &a, 2, bad_margin, &e) == -1 && strstr(e.msg, "a number >= 1"));
    const char *nan_margin[] = {"--margin", "nan"};
    CHECK(parse_all(&g, &a, 2, nan_margin, &e) == -1 && strstr(e.msg, "finite number >= 0"));
    const char *bad_drift[] = {"--env-drift", "sometimes"};
    CHECK(parse_all(&g, &a, 2, bad_drift, &e) == -1 && strstr(e.msg, "warn or fail"));
    const char *missing[] = {"--criteria"};
    CHECK(parse_all(&g, &a, 1, missing, &e) == -1 && strstr(e.msg, "needs a value"));
    const char *strict[] = {"--strict-tol"}; /* the run's, not gate's */
    CHECK(parse_all(&g, &a, 1, strict, &e) == -2);
    const char *switch_value[] = {"--record=1"};
    CHECK(parse_all(&g, &a, 1, switch_value, &e) == -2);
}

/* The criteria file: written atomically and read back equal; a folder, a
 * FIFO and a missing file refused without blocking, each named. */
static void test_criteria_file(void)
{
    world w;
    make_world(&w);
    onp_criteria rec, back;
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_gate_record(&w.run, &w.lint, "ab", 2, &rec, &e) == 0);
    char dir[] = "/tmp/onp_test_gate_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128], fifo[128];
    snprintf(path, sizeof path, "%s/criteria.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    char *txt = NULL;
    CHECK(onp_criteria_write(&rec, path, &txt, &e) == 0 && txt && txt[0] == '{');
    CHECK(onp_criteria_read(path, &back, &e) == 0);
    CHECK(back.n_out == rec.n_out && back.outs[0].max_abs == rec.outs[0].max_abs);
    onp_criteria_free(&back); /* each read below starts from a zeroed struct */
    CHECK(onp_criteria_read(dir, &back, &e) == -1 && e.code == ONP_ERR_IO &&
          strstr(e.msg, "folder"));
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(onp_criteria_read(fifo, &back, &e) == -1 && e.code == ONP_ERR_IO &&
          strstr(e.msg, "not a regular file"));
    CHECK(onp_criteria_read("/nonexistent/c.json", &back, &e) == -1 && e.code == ONP_ERR_IO &&
          !strcmp(e.file, "/nonexistent/c.json"));
    free(txt);
    onp_criteria_free(&rec);
    onp_criteria_free(&back);
    unlink(fifo);
    unlink(path);
    rmdir(dir);
}

TEST_MAIN(test_criteria_parse, test_record_limits, test_record_document, test_recordable,
          test_judge_regression, test_judge_noise, test_drift_policy, test_record_failures,
          test_gate_args, test_criteria_file, test_criteria_targets)
