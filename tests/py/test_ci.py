"""A gate CI engineers can trust (issue 17).

Must-show 1: criteria recorded under ORT 1.29 and gated with ORT 1.30
(onnxruntime-node@1.30.0's official library, scripts/setup.sh consumers):
the drift is in the text, the JSON and the JUnit, and fails under
--env-drift fail; merge refuses shards of other environments or tolerances.
Must-show 3: the JUnit, SARIF and JSON the commands here write go through
junitparser, sarif-multitool and the published schemas (conftest.run); the
cases here make sure each kind of file is actually written and read.
Must-show 5: `diff` on an improved, an unchanged and a regressed pair.
Also: no flag without effect, JUnit when the run cannot start."""
import json
import shutil

import pytest

import consumers
from conftest import ROOT, run

HEALTHY = ROOT / "examples" / "healthy"
TRAINING = ROOT / "examples" / "training"
ORT130 = ROOT / "third_party" / "onnxruntime-1.30" / "lib" / "libonnxruntime.so.1"


@pytest.fixture
def ort130():
    if not ORT130.exists():
        pytest.skip(f"{ORT130} is missing (scripts/setup.sh consumers fetches ORT 1.30.0)")
    return ORT130


@pytest.fixture
def recorded(onnxparity, tmp_path):
    crit = tmp_path / "criteria.json"
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record"])
    assert r.returncode == 0, r.stderr
    return crit


def junit_cases(path):
    xml = consumers.check_junit(path)
    if xml is None:
        pytest.skip("junitparser is not installed (apt-get install python3-junitparser)")
    return {(c.classname, c.name): c for suite in xml for c in suite}


# --- Must-show 1: environment drift ------------------------------------------


def test_criteria_record_the_environment(onnxparity, recorded):
    env = json.loads(recorded.read_text())["environment"]
    assert env["ort_version"] == "1.29.0" and len(env["ort_library_sha256"]) == 64
    assert env["provider"] == "CPUExecutionProvider" and env["opt_level"] == "all"
    assert env["intra_threads"] == 0 and env["inter_threads"] == 0 and env["session_config"] == []
    assert env["opset"] == 13 and env["exporter"] == "legacy" and env["torch_version"].startswith("1.13")
    assert len(env["model_sha256"]) == 64


def test_other_ort_version_drifts_in_text_json_and_junit(onnxparity, recorded, ort130, tmp_path):
    base = [onnxparity, "gate", HEALTHY, "--criteria", recorded, "--ort-lib", ort130]
    r = run(base + ["--junit", tmp_path / "warn.xml"])
    assert r.returncode == 0, r.stdout + r.stderr  # warning by default
    assert "runtime  ONNX Runtime 1.30.0" in r.stdout
    assert "drift    ort_version: 1.29.0 at record time, 1.30.0 now (warning;" in r.stdout
    assert "drift    ort_library_sha256:" in r.stdout
    doc = json.loads(run(base + ["--format", "json"]).stdout)
    assert doc["verdict"] == "pass" and doc["env_drift_policy"] == "warn"
    d = {x["field"]: x for x in doc["environment_drift"]}
    assert d["ort_version"] == {"field": "ort_version", "kind": "runtime", "recorded": "1.29.0",
                                "current": "1.30.0", "effect": "warning"}
    assert set(d) == {"ort_version", "ort_library_sha256"}  # nothing else moved
    cases = junit_cases(tmp_path / "warn.xml")
    ov = cases["environment", "ort_version"]
    assert ov.is_passed and "1.29.0 at record time, 1.30.0 now" in ov.system_out
    assert cases["environment", "opset"].is_passed and not cases["environment", "opset"].system_out

    r = run(base + ["--env-drift", "fail", "--junit", tmp_path / "fail.xml"])
    assert r.returncode == 1, r.stdout
    assert "regressed: environment drift: ort_version: 1.29.0 at record time, 1.30.0 now" in r.stdout
    doc = json.loads(run(base + ["--env-drift", "fail", "--format", "json"]).stdout)
    assert doc["verdict"] == "fail" and {g["check"] for g in doc["regressions"]} == {"environment"}
    assert {x["effect"] for x in doc["environment_drift"]} == {"failure"}
    cases = junit_cases(tmp_path / "fail.xml")
    assert not cases["environment", "ort_version"].is_passed
    assert all(c.is_passed for k, c in cases.items() if k[0].startswith("test_data_set"))


def test_settings_drift_and_model_hash_is_a_note(onnxparity, recorded, tmp_path):
    r = run([onnxparity, "gate", HEALTHY, "--criteria", recorded, "--opt-level", "basic",
             "--threads", "2", "--session-config", "session.set_denormal_as_zero=1"])
    assert r.returncode == 0
    for line in ("drift    opt_level: all at record time, basic now",
                 "drift    intra_threads: 0 at record time, 2 now",
                 "drift    session_config: (none) at record time, session.set_denormal_as_zero=1 now"):
        assert line in r.stdout, r.stdout
    assert r.stdout.rstrip().endswith("(see the drift lines above)"), r.stdout
    # a new model hash alone (the same graph re-saved with a doc string) is a
    # note: the passing verdict does not send the reader to drift lines
    resaved = tmp_path / "resaved"
    shutil.copytree(HEALTHY, resaved)
    onnx = pytest.importorskip("onnx")
    m = onnx.load(str(resaved / "model.onnx"))
    m.doc_string = "re-exported"
    onnx.save(m, str(resaved / "model.onnx"))
    r = run([onnxparity, "gate", resaved, "--criteria", recorded])
    assert r.returncode == 0 and "note     model_sha256" in r.stdout, r.stdout
    verdict = [ln for ln in r.stdout.splitlines() if ln.startswith("verdict: ")]
    assert verdict and verdict[0].startswith("verdict: pass") and "lines above" not in verdict[0], r.stdout
    other = tmp_path / "other"
    shutil.copytree(TRAINING, other)
    r = run([onnxparity, "gate", other, "--criteria", recorded, "--env-drift", "fail",
             "--format", "json"])
    d = {x["field"]: x for x in json.loads(r.stdout)["environment_drift"]}
    assert d["model_sha256"]["effect"] == "note"  # a re-export changes it: never a failure


def test_old_criteria_without_environment_say_so(onnxparity, recorded, tmp_path):
    c = json.loads(recorded.read_text())
    del c["environment"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(c))
    r = run([onnxparity, "gate", HEALTHY, "--criteria", old])
    assert r.returncode == 0 and "records no environment" in r.stdout


def _shards(onnxparity, tmp_path, name, *extra):
    out = []
    for i in range(2):
        p = tmp_path / f"{name}{i}.json"
        r = run([onnxparity, "check", TRAINING, "--shard", f"{i}/2", "--format", "json",
                 "--no-bisect", *(extra if i == 1 else ())])
        p.write_text(r.stdout)
        out.append(p)
    return out


@pytest.mark.parametrize("extra,field", [
    (("--threads", "2"), "environment.intra_threads '2' differs"),
    (("--opt-level", "basic"), "environment.opt_level 'basic' differs"),
    (("--rtol", "1", "--atol", "1"), "output 'logits' was compared with rtol 1, atol 1"),
])
def test_merge_refuses_other_settings(onnxparity, tmp_path, extra, field):
    a, b = _shards(onnxparity, tmp_path, "s", *extra)
    r = run([onnxparity, "merge", a, b, "--junit", tmp_path / "m.xml"])
    assert r.returncode == 2 and field in r.stderr, r.stderr
    cases = junit_cases(tmp_path / "m.xml")  # still a file, one errored case
    assert [c.result[0]._tag for c in cases.values()] == ["error"]


def test_merge_refuses_other_ort_version(onnxparity, tmp_path, ort130):
    a, b = _shards(onnxparity, tmp_path, "s", "--ort-lib", str(ort130))
    r = run([onnxparity, "merge", a, b])
    assert r.returncode == 2
    assert "environment.ort_version '1.30.0' differs from" in r.stderr and "'1.29.0'" in r.stderr


# --- no flag without effect ------------------------------------------------------


@pytest.mark.parametrize("flag", [["--rtol", "1e-3"], ["--atol", "1e-3"], ["--margin", "3"],
                                  ["--allow-failing"]])
def test_gate_refuses_record_only_flags(onnxparity, recorded, flag):
    r = run([onnxparity, "gate", HEALTHY, "--criteria", recorded, *flag])
    assert r.returncode == 2 and "applies to --record only" in r.stderr


def test_record_honours_format_and_junit(onnxparity, tmp_path):
    crit, xml = tmp_path / "c.json", tmp_path / "r.xml"
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record", "--format", "json",
             "--junit", xml])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(crit.read_text())  # the criteria document itself
    cases = junit_cases(xml)
    assert sorted(k for k in cases) == [(f"test_data_set_{i}", "logits") for i in range(3)]
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record", "--margin", "3"])
    assert r.returncode == 0 and "limit    logits.max_abs: " in r.stdout  # what re-recording moves
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record", "--env-drift", "fail"])
    assert r.returncode == 2 and "gating only" in r.stderr


def test_unknown_tol_name_exits_2(onnxparity):
    r = run([onnxparity, "check", HEALTHY, "--tol", "nosuch=1e-3,1e-4"])
    assert r.returncode == 2 and "no output named 'nosuch'" in r.stderr
    assert run([onnxparity, "check", HEALTHY, "--tol", "logits=1e-3,1e-4"]).returncode == 0


# --- JUnit that readers read right -------------------------------------------------


def test_junit_written_when_the_run_cannot_start(onnxparity, recorded, tmp_path):
    bad = tmp_path / "trunc"
    shutil.copytree(HEALTHY, bad)
    (bad / "model.onnx").write_bytes((HEALTHY / "model.onnx").read_bytes()[:300])
    for cmd in (["check", bad], ["gate", bad, "--criteria", recorded]):
        xml = tmp_path / f"{cmd[0]}.xml"
        r = run([onnxparity, *cmd, "--junit", xml])
        assert r.returncode == 3, r.stderr
        cases = list(junit_cases(xml).values())
        assert len(cases) == 1 and cases[0].result[0]._tag == "error"
        assert "claims" in cases[0].result[0].message  # the reader's own words: why
    xml = tmp_path / "nocrit.xml"
    assert run([onnxparity, "gate", HEALTHY, "--criteria", tmp_path / "none.json",
                "--junit", xml]).returncode == 3
    assert "cannot open" in list(junit_cases(xml).values())[0].result[0].message


def test_gate_junit_ids_are_unique_and_digits_differ(onnxparity, recorded, tmp_path):
    xml = tmp_path / "g.xml"
    r = run([onnxparity, "gate", TRAINING, "--criteria", recorded, "--junit", xml])
    assert r.returncode == 1
    cases = junit_cases(xml)
    lint = sorted(n for k, n in cases if k == "criteria")
    assert "lint ONP104" in lint and "lint ONP101" in lint and len(lint) == len(set(lint))
    failing = [c for c in cases.values() if not c.is_passed and c.result]
    assert sum(1 for c in failing if c.classname.startswith("test_data_set")) == 3
    props = {p.name: p.value for suite in consumers.check_junit(xml) for p in suite.properties()}
    assert props["ort_version"] == "1.29.0" and props["env_drift_policy"] == "warn"
    text = cases["test_data_set_0", "logits"].result[0].text
    assert "expected 0.09159762" in text  # enough digits for expected and got to differ


def test_sharded_junit_has_bundle_cases_once_and_merge_junit(onnxparity, tmp_path):
    full = tmp_path / "full.xml"
    run([onnxparity, "check", TRAINING, "--no-bisect", "--junit", full])
    docs = []
    for i in range(2):
        j = tmp_path / f"j{i}.xml"
        r = run([onnxparity, "check", TRAINING, "--shard", f"{i}/2", "--no-bisect",
                 "--format", "json", "--junit", j])
        (tmp_path / f"s{i}.json").write_text(r.stdout)
        docs.append(tmp_path / f"s{i}.json")
        lint = [k for k in junit_cases(j) if k[0] == "lint"]
        assert bool(lint) == (i == 0)  # the bundle-wide cases in shard 0 only
    merged = tmp_path / "m.xml"
    r = run([onnxparity, "merge", *docs, "--junit", merged])
    assert r.returncode == 1
    a, b = junit_cases(full), junit_cases(merged)
    assert sorted(a) == sorted(b)
    assert sorted(k for k, c in a.items() if not c.is_passed) == \
        sorted(k for k, c in b.items() if not c.is_passed)


# --- SARIF and schemas, with the consumers present ---------------------------------


def test_consumers_are_installed():
    """make test installs every consumer: say plainly when one is missing."""
    missing = []
    try:
        import junitparser  # noqa: F401
    except ImportError:
        missing.append("python3-junitparser")
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        missing.append("python3-jsonschema")
    if not consumers.SARIF_TOOL.exists():
        missing.append("sarif-multitool (scripts/setup.sh consumers)")
    if missing:
        pytest.skip("not installed: " + ", ".join(missing))


def test_sarif_validates_clean(onnxparity, tmp_path):
    if not consumers.SARIF_TOOL.exists():
        pytest.skip("sarif-multitool is missing (scripts/setup.sh consumers)")
    s = tmp_path / "c.sarif"
    run([onnxparity, "check", TRAINING, "--no-bisect", "--sarif", s])  # validated by run()
    doc = json.loads(s.read_text())
    r = doc["runs"][0]
    assert r["tool"]["driver"]["informationUri"] and all(x["helpUri"] for x in r["tool"]["driver"]["rules"])
    assert r["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file://")
    locs = [loc for res in r["results"] for loc in res["locations"]]
    node = next(loc for loc in locs if loc.get("logicalLocations"))
    assert node["physicalLocation"]["artifactLocation"] == {"uri": "examples/training/model.onnx",
                                                            "uriBaseId": "SRCROOT"} or \
        node["physicalLocation"]["artifactLocation"]["uri"].endswith("examples/training/model.onnx")
    assert node["physicalLocation"]["region"]["byteLength"] > 0
    assert node["logicalLocations"][0]["kind"] == "function"
    # a corrupted document is refused by the same consumer
    bad = tmp_path / "bad.sarif"
    del doc["runs"][0]["tool"]["driver"]["informationUri"]
    bad.write_text(json.dumps(doc))
    with pytest.raises(AssertionError, match="SARIF2005"):
        consumers.check_sarif(bad)


def test_schemas_cover_the_capture_and_refuse_broken_documents(onnxparity):
    pytest.importorskip("jsonschema")
    for b in (HEALTHY, TRAINING):
        consumers.validate_doc(json.loads((b / "parity.json").read_text()), f"{b}/parity.json")
        for idx in b.glob("test_data_set_*/intermediates/index.json"):
            consumers.validate_doc(json.loads(idx.read_text()), str(idx))
    doc = json.loads(run([onnxparity, "check", HEALTHY, "--format", "json"]).stdout)
    doc["verdict"] = "maybe"
    with pytest.raises(AssertionError, match="verdict"):
        consumers.validate_doc(doc, "edited")
    with pytest.raises(AssertionError, match="no published schema"):
        consumers.validate_doc({"schema": "onnxparity.nosuch/1"}, "made up")


# --- Must-show 5: diff ----------------------------------------------------------------


def _check_doc(onnxparity, bundle, path):
    r = run([onnxparity, "check", bundle, "--format", "json", "--no-bisect"])
    path.write_text(r.stdout)
    return path


def _nudged(tmp_path, delta):
    """The healthy bundle with one eager output element moved by delta."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    b = tmp_path / f"nudged{delta}"
    shutil.copytree(HEALTHY, b)
    p = b / "test_data_set_1" / "output_0.pb"
    t = onnx.TensorProto()
    t.ParseFromString(p.read_bytes())
    a = numpy_helper.to_array(t).copy()
    a.flat[3] += delta
    p.write_bytes(numpy_helper.from_array(a, t.name).SerializeToString())
    return b


def test_diff_unchanged(onnxparity, tmp_path):
    a = _check_doc(onnxparity, HEALTHY, tmp_path / "a.json")
    b = _check_doc(onnxparity, HEALTHY, tmp_path / "b.json")
    r = run([onnxparity, "diff", a, b])
    assert r.returncode == 0 and "verdict: unchanged" in r.stdout, r.stdout
    doc = json.loads(run([onnxparity, "diff", a, b, "--format", "json"]).stdout)
    assert doc["verdict"] == "unchanged" and doc["summary"]["same"] == 4
    assert doc["environment_drift"] == []


def test_diff_regressed_names_output_and_fixture(onnxparity, tmp_path):
    a = _check_doc(onnxparity, HEALTHY, tmp_path / "a.json")
    # still passing (3e-6 < atol 1e-5), but max_abs grew x25: worse
    b = _check_doc(onnxparity, _nudged(tmp_path, 3e-6), tmp_path / "b.json")
    r = run([onnxparity, "diff", a, b])
    assert r.returncode == 1 and "verdict: REGRESSED" in r.stdout, r.stdout
    assert "fixture  test_data_set_1 logits: worse: max_abs" in r.stdout
    assert "test_data_set_0" not in r.stdout  # unchanged fixtures are not listed
    doc = json.loads(run([onnxparity, "diff", a, b, "--format", "json"]).stdout)
    worse = [(f["fixture"], f["output"]) for f in doc["fixtures"] if f["change"] == "worse"]
    assert worse == [("test_data_set_1", "logits")] and doc["outputs"][0]["change"] == "worse"
    t = _check_doc(onnxparity, TRAINING, tmp_path / "t.json")
    r = run([onnxparity, "diff", a, t])
    assert r.returncode == 1 and "output   logits: worse: passes in OLD, fails in NEW" in r.stdout
    assert "drift    model_sha256:" in r.stdout


def test_diff_improved_and_small_moves_are_same(onnxparity, tmp_path):
    t = _check_doc(onnxparity, TRAINING, tmp_path / "t.json")
    a = _check_doc(onnxparity, HEALTHY, tmp_path / "a.json")
    r = run([onnxparity, "diff", t, a, "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["verdict"] == "improved"
    assert doc["summary"]["better"] == 4 and doc["summary"]["worse"] == 0
    # a move of max_abs below x2 is float noise, not a change
    b = _check_doc(onnxparity, _nudged(tmp_path, 2e-8), tmp_path / "b.json")
    r = run([onnxparity, "diff", a, b])
    assert r.returncode == 0 and "verdict: unchanged" in r.stdout, r.stdout


def test_diff_usage(onnxparity, recorded, tmp_path):
    a = _check_doc(onnxparity, HEALTHY, tmp_path / "a.json")
    assert run([onnxparity, "diff", a]).returncode == 2
    assert run([onnxparity, "diff", a, recorded]).returncode == 2  # a criteria file
    (tmp_path / "g.json").write_text("{")
    assert run([onnxparity, "diff", a, tmp_path / "g.json"]).returncode == 3


# --- CI-native summaries and the HTML page ------------------------------------------


def test_annotations_and_markdown_summary(onnxparity, recorded, tmp_path):
    md = tmp_path / "summary.md"
    md.write_text("earlier step\n")
    r = run([onnxparity, "gate", TRAINING, "--criteria", recorded, "--annotations",
             "--summary", md, "--no-bisect"])
    assert r.returncode == 1
    cmds = [ln for ln in r.stdout.splitlines() if ln.startswith("::")]
    assert cmds[0].startswith("::error file=") and "title=onnxparity cause%3A training-mode" in cmds[0]
    assert any("regressed (max_abs)::logits: max_abs 0.485 > recorded limit" in c for c in cmds)
    assert "%0Afix: call model.eval()" in cmds[0]  # one line: the newline percent-encoded
    text = md.read_text()
    assert text.startswith("earlier step\n### onnxparity gate: FAIL")  # appended, not replaced
    assert "| test_data_set_0 | logits | max_abs |" in text and "**training-mode**" in text
    r = run([onnxparity, "check", HEALTHY, "--annotations", "--summary", md])
    assert r.returncode == 0 and not [ln for ln in r.stdout.splitlines() if ln.startswith("::")]
    assert "### onnxparity check: pass" in md.read_text()
    assert run([onnxparity, "check", HEALTHY, "--annotations", "--format", "json"]).returncode == 2
    assert run([onnxparity, "gate", HEALTHY, "--criteria", recorded, "--record",
                "--summary", md]).returncode == 2


def test_check_html_shows_every_metric(onnxparity, tmp_path):
    page = tmp_path / "c.html"
    assert run([onnxparity, "check", HEALTHY, "--html", page]).returncode == 0
    html = page.read_text()
    assert '<td class="num">\u2014</td>' not in html  # no metric missing
    doc = json.loads(run([onnxparity, "check", HEALTHY, "--format", "json"]).stdout)
    ma = doc["fixtures"][0]["outputs"][0]["max_abs"]
    assert f'<td class="num">{ma:.3g}</td>' in html


def test_gate_sarif_and_merge_html(onnxparity, recorded, tmp_path):
    s = tmp_path / "g.sarif"
    r = run([onnxparity, "gate", TRAINING, "--criteria", recorded, "--sarif", s, "--no-bisect"])
    assert r.returncode == 1 and s.exists()  # validated by run()
    ids = {x["ruleId"] for x in json.loads(s.read_text())["runs"][0]["results"]}
    assert "ONP104" in ids
    a, b = _shards(onnxparity, tmp_path, "h")
    page = tmp_path / "m.html"
    r = run([onnxparity, "merge", a, b, "--html", page, "--format", "json"])
    assert r.returncode == 1 and json.loads(r.stdout)["summary"]["fixtures"] == 3
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and '<td class="num">\u2014</td>' not in html


def test_reexport_at_another_opset_drifts(onnxparity, tmp_path):
    """The same model re-exported at opset 17 against criteria recorded at
    opset 13: an export drift (a warning, a regression under fail), and the
    model hash a note."""
    torch = pytest.importorskip("torch")
    import importlib.util
    import onnxparity as op
    spec = importlib.util.spec_from_file_location("eac", ROOT / "examples" / "ci" / "export_and_capture.py")
    eac = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eac)
    torch.manual_seed(0)
    model = eac.SmallCNN().eval()
    fx = [torch.randn(b, 3, 12, 12, generator=torch.Generator().manual_seed(1)) for b in (1, 2)]
    for opset in (13, 17):
        op.capture(model, fx, tmp_path / f"o{opset}", input_names=["image"],
                   output_names=["logits"], opset=opset, exporter="legacy")
    crit = tmp_path / "c.json"
    assert run([onnxparity, "gate", tmp_path / "o13", "--criteria", crit, "--record"]).returncode == 0
    r = run([onnxparity, "gate", tmp_path / "o17", "--criteria", crit])
    assert r.returncode == 0, r.stdout
    assert "drift    opset: 13 at record time, 17 now (warning;" in r.stdout
    assert "note     model_sha256:" in r.stdout
    r = run([onnxparity, "gate", tmp_path / "o17", "--criteria", crit, "--env-drift", "fail",
             "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 1
    assert [(d["field"], d["kind"], d["effect"]) for d in doc["environment_drift"]] == [
        ("opset", "export", "failure"), ("model_sha256", "note", "note")]


def test_diff_many_fixtures(onnxparity, tmp_path):
    """More pairs than diff's first allocation (the table grows while a pair
    is being filled): every fixture matched, the one that changed named."""
    base = json.loads(run([onnxparity, "check", HEALTHY, "--format", "json"]).stdout)
    fx = base["fixtures"][0]
    base["fixtures"] = [dict(fx, index=i, dir=f"b/test_data_set_{i}") for i in range(60)]
    a = tmp_path / "a.json"
    a.write_text(json.dumps(base))
    worse = json.loads(json.dumps(base))
    o = worse["fixtures"][41]["outputs"][0]
    o["max_abs"] = o["max_abs"] * 100
    b = tmp_path / "b.json"
    b.write_text(json.dumps(worse))
    assert run([onnxparity, "diff", a, a]).returncode == 0
    doc = json.loads(run([onnxparity, "diff", a, b, "--format", "json"]).stdout)
    assert doc["verdict"] == "regressed" and len(doc["fixtures"]) == 60
    assert [f["fixture"] for f in doc["fixtures"] if f["change"] == "worse"] == ["test_data_set_41"]
