"""Issue 28, Must-show 1: cli/ holds no decision.  scripts/cli_decisions.py
lists the functions of cli/ that compute a verdict, an exit code from a
verdict, a threshold, a limit or a cause: the list is empty.  The script is
shown to find each kind of decision in planted code (a test that cannot
fail checks nothing), and to leave formatting alone: a word chosen from an
onp_run_verdict, a result's own pass flag, an exit code read, a table of
words indexed by the verdict.

    /usr/bin/python3 -m pytest -q tests/py/test_cli_decisions.py
"""
import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "cli_decisions.py"

# function name -> (the rule that must report it, its body)
DECIDING = {
    "exit_from_count": ("exit-code", "return failed ? EXIT_FAIL : EXIT_PASS;"),
    "exit_by_hand": ("exit-code", "if (!avail) rc = EXIT_RUNTIME;\n    return rc;"),
    "library_exit_by_hand": ("exit-code", "return lost ? ONP_EXIT_RUNTIME : 0;"),
    "verdict_by_hand": ("verdict-enum",
                        "onp_run_verdict v = lost ? ONP_RUN_ERROR : n ? ONP_RUN_FAIL : ONP_RUN_PASS;\n"
                        "    return v;"),
    "verdict_word_from_count": ("verdict-word", 'return n_reg ? "fail" : "pass";'),
    "headline_from_count": ("verdict-word",
                            'printf("verdict: %s\\n", lost ? "ERROR (crashed)" : "pass");'),
    "headline_from_flags": ("verdict-word", 'puts(any_error || l->n ? "FAIL" : "pass");'),
    "verdict_read_by_hand": ("verdict-name", 'return !strcmp(v, "error") ? 4 : 0;'),
    "status_read_by_hand": ("verdict-name", 'n += !st || strcmp(st, "pass");'),
    "confidence_rank": ("confidence", 'return !strcmp(c, "high") ? 0 : 1;'),
    "confidence_word": ("confidence", 'return strong ? "high" : "low";'),
    "cause_by_hand": ("cause", "c->id = ONP_CAUSE_FLOAT_NOISE;"),
    "cause_name_compared": ("cause", 'if (!strcmp(id, "float-noise")) n++;'),
    "limit_formula": ("limit", "double lim = measured * margin;\n    return lim;"),
    "limit_floor": ("limit", "return fmax(max_abs, envelope);"),
    "limit_scaled_tolerance": ("limit", "t.atol *= 2;"),
    "threshold_check": ("threshold", "if (v > limit) n++;"),
    "threshold_floor": ("threshold", "int low = frac < co->top1_min;\n    return low;"),
}

# formatting and reading: must not be reported
FORMATTING = {
    "word_from_verdict": 'return v == ONP_RUN_FAIL ? "FAIL" : "pass";',
    "word_from_result_flag": 'return x->pass ? "pass" : "FAIL";',
    "word_from_cell_flag": 'return L->cells[k].pass ? "ok" : "FAIL";',
    "word_from_enum": 'return eff == ONP_DRIFT_EFFECT_FAILURE ? "error" : "warning";',
    "class_from_document": 'return cJSON_IsTrue(get(o, "pass")) ? "pass" : "fail";',
    "class_through_table": 'return onp_confidence_from_name(c, &k) ? "low" : onp_confidence_name(k);',
    "exit_from_library": "return onp_run_exit_code(onp_merge_verdict(names, n, failed));",
    "exit_code_read": "if (rc == EXIT_PASS || rc == EXIT_FAIL) rc = EXIT_IO;\n    return rc;",
    "verdict_compared": "if (g->verdict == ONP_RUN_ERROR) n++;\n    return n;",
    "word_table": 'static const char *const w[] = {[ONP_RUN_PASS] = "pass", [ONP_RUN_FAIL] = "FAIL"};\n'
                  "    return w[v];",
    "option_range": "if (margin < 1 || !isfinite(margin)) return -1;\n    return 0;",
    "running_max": "if (env > v->envelope) v->envelope = env;",
    "cause_compared": "if (c->id == ONP_CAUSE_UNKNOWN) puts(args);",
    "message_arithmetic": "snprintf(msg + strlen(msg), sizeof msg - strlen(msg), \"%s\", x);",
}

HIT = re.compile(r"^(?P<file>[^:]+):(?P<func>\w+):(?P<line>\d+): (?P<rule>[\w-]+): ")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_cli_decides_nothing():
    r = run()
    assert r.returncode == 0 and r.stdout == "", (
        "functions of cli/ that decide (move the rule into the library):\n" + r.stdout + r.stderr)


def test_planted_decisions_are_found(tmp_path):
    src = ["/* planted: each function holds one decision, or only formatting */"]
    for name, body in [(n, b) for n, (_, b) in DECIDING.items()] + list(FORMATTING.items()):
        src += [f"static int {name}(void)", "{", f"    {body}", "}", ""]
    planted = tmp_path / "planted.c"
    planted.write_text("\n".join(src))
    r = run(planted)
    assert r.returncode == 1, r.stdout + r.stderr
    hits = [HIT.match(line) for line in r.stdout.splitlines()]
    assert all(hits), "every hit reads FILE:FUNCTION:LINE: RULE: ...\n" + r.stdout
    found = {(h["func"], h["rule"]) for h in hits}
    for name, (rule, _) in DECIDING.items():
        assert (name, rule) in found, f"{name}: not reported as {rule}\n{r.stdout}"
    wrongly = sorted({h["func"] for h in hits} & set(FORMATTING))
    assert not wrongly, f"formatting reported as a decision: {wrongly}\n{r.stdout}"
    # the line is the decision's own, inside the function named
    lines = planted.read_text().splitlines()
    for h in hits:
        above = [ln for ln in lines[:int(h["line"]) - 1] if ln.startswith("static int ")]
        assert above and above[-1].startswith(f"static int {h['func']}("), h.group(0)


def test_a_missing_path_is_a_usage_error(tmp_path):
    r = run(tmp_path / "none.c")
    assert r.returncode == 2 and "no C file" in r.stderr
