"""`gate`, `merge`, `check --junit` and `check --shard` (issue 6).

Must-show 2: JUnit XML parses with a strict XML parser even when output
names hold `<`, `&`, quotes and non-ASCII.  Must-show 3: gate exits 1 when a
recorded tolerance regresses, 0 otherwise, 2 on a malformed criteria file."""
import json
import re
import shutil
import xml.dom.minidom
import xml.etree.ElementTree as ET

import pytest

from conftest import ROOT, run

HEALTHY = ROOT / "examples" / "healthy"
TRAINING = ROOT / "examples" / "training"


@pytest.fixture
def recorded(onnxparity, tmp_path):
    crit = tmp_path / "criteria.json"
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record"])
    assert r.returncode == 0, r.stderr
    return crit


def test_record_then_gate_passes(onnxparity, recorded, tmp_path):
    c = json.loads(recorded.read_text())
    assert c["schema"] == "onnxparity.criteria/1" and c["fixtures"] == 3 and c["margin"] == 2
    lg = c["outputs"]["logits"]
    assert lg["shapes"] == [[1, 10], [2, 10], [4, 10]] and lg["top1_min"] == 1
    assert lg["max_abs"] == 2 * lg["measured"]["max_abs"] > 0
    assert "ONP101" in c["lint_clean"]
    r = run([onnxparity, "gate", HEALTHY, "--criteria", recorded, "--format", "json",
             "--junit", tmp_path / "g.xml"])
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass" and doc["regressions"] == []
    assert doc["environment"]["model_sha256"] == c["model_sha256"]
    suite = ET.parse(tmp_path / "g.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    cases = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")]
    assert [c for c in cases if c[0] != "environment"] == [
        (f"test_data_set_{i}", "logits") for i in range(3)]
    # one case per recorded environment field, every one unchanged here
    assert {n for k, n in cases if k == "environment"} >= {"ort_version", "opset", "model_sha256"}
    assert all(c.find("system-out") is None for c in suite.iter("testcase"))


def test_margin_scales_the_limits(onnxparity, tmp_path):
    crit = tmp_path / "c.json"
    assert run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record", "--margin", "5"]).returncode == 0
    lg = json.loads(crit.read_text())["outputs"]["logits"]
    assert lg["max_abs"] == 5 * lg["measured"]["max_abs"]
    assert run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record", "--margin", "0.5"]).returncode == 2


def test_regression_within_default_tolerance_fails_the_gate(onnxparity, recorded, tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    bundle = tmp_path / "regressed"
    shutil.copytree(HEALTHY, bundle)
    p = bundle / "test_data_set_1" / "output_0.pb"
    t = onnx.TensorProto()
    t.ParseFromString(p.read_bytes())
    a = numpy_helper.to_array(t).copy()
    a.flat[3] += 3e-6  # far below atol 1e-5, far above the recorded 2.4e-7
    p.write_bytes(numpy_helper.from_array(a, t.name).SerializeToString())
    assert run([onnxparity, "check", bundle]).returncode == 0, "still within the default tolerance"
    r = run([onnxparity, "gate", bundle, "--criteria", recorded, "--junit", tmp_path / "g.xml"])
    assert r.returncode == 1, r.stdout + r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("regressed: ")]
    assert any(re.fullmatch(r"regressed: logits: max_abs 3\.\d+e-06 > recorded limit 2\.38e-07 "
                            r"\(test_data_set_1\)", ln) for ln in line), r.stdout
    assert "verdict: FAIL" in r.stdout
    doc = json.loads(run([onnxparity, "gate", bundle, "--criteria", recorded, "--format", "json"]).stdout)
    g = [x for x in doc["regressions"] if x["check"] == "max_abs"]
    assert g and g[0]["output"] == "logits" and g[0]["fixture"] == "test_data_set_1"
    assert g[0]["value"] > g[0]["limit"]
    cases = ET.parse(tmp_path / "g.xml").getroot().iter("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [("test_data_set_1", "logits")]
    assert "max_abs" in failed[0].find("failure").get("message")


def test_training_bundle_regresses_lint_and_numbers(onnxparity, recorded):
    r = run([onnxparity, "gate", TRAINING, "--criteria", recorded])
    assert r.returncode == 1
    assert "regressed: lint ONP104 batchnorm-training" in r.stdout
    assert "regressed: logits: mismatch_frac 1 > allowed 0" in r.stdout


def test_fewer_fixtures_and_missing_shapes_regress(onnxparity, recorded, tmp_path):
    bundle = tmp_path / "fewer"
    shutil.copytree(HEALTHY, bundle)
    shutil.rmtree(bundle / "test_data_set_2")
    r = run([onnxparity, "gate", bundle, "--criteria", recorded])
    assert r.returncode == 1
    assert "fixtures: 2 present, criteria require 3" in r.stdout
    assert "logits: no fixture with shape [4, 10]" in r.stdout


@pytest.mark.parametrize("text,field", [
    ("{not json", "at byte"),
    ("", "at byte 0"),
    ('{"schema": "onnxparity.criteria/2"}', "schema"),
    ('[1, 2]', "not a JSON object"),
    (None, "fixtures"),
    (None, "outputs.logits.max_abs"),
    (None, "outputs.logits.rtol"),
    (None, "lint_clean[0]"),
    (None, "outputs.logits.shapes[0]"),
])
def test_malformed_criteria_exit_2_with_one_line(onnxparity, recorded, tmp_path, text, field):
    if text is None:
        c = json.loads(recorded.read_text())
        if field == "fixtures":
            c["fixtures"] = "three"
        elif field == "outputs.logits.max_abs":
            c["outputs"]["logits"]["max_abs"] = -1
        elif field == "outputs.logits.rtol":
            del c["outputs"]["logits"]["rtol"]
        elif field == "lint_clean[0]":
            c["lint_clean"][0] = "ONP999"
        else:
            c["outputs"]["logits"]["shapes"][0] = [1, 2.5]
        text = json.dumps(c)
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    r = run([onnxparity, "gate", HEALTHY, "--criteria", bad])
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and field in lines[0], r.stderr
    assert r.stdout == ""


def test_nan_in_criteria_is_refused(onnxparity, recorded, tmp_path):
    for v in ("NaN", "1e999", '"nan"'):
        bad = tmp_path / "nan.json"
        bad.write_text(recorded.read_text().replace('"top1_min":\t1', '"top1_min":\t' + v))
        assert v in bad.read_text()
        r = run([onnxparity, "gate", HEALTHY, "--criteria", bad])
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (v, r.stderr)


def test_missing_criteria_file_and_usage(onnxparity, tmp_path):
    r = run([onnxparity, "gate", HEALTHY, "--criteria", tmp_path / "none.json"])
    assert r.returncode == 3 and "none.json" in r.stderr
    assert run([onnxparity, "gate", HEALTHY]).returncode == 2


# --- JUnit with hostile names ------------------------------------------------

HOSTILE = 'a<b>&"c\'\u00e9\u4e2d\U0001F600'


def _hostile_bundle(path):
    onnx = pytest.importorskip("onnx")
    np = pytest.importorskip("numpy")
    from onnx import TensorProto, helper, numpy_helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    outs = [helper.make_tensor_value_info(HOSTILE, TensorProto.FLOAT, ["N", 3]),
            helper.make_tensor_value_info("ctl\x01\x1f&amp;", TensorProto.FLOAT, ["N", 3])]
    c = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "c")
    nodes = [helper.make_node("Add", ["x", "c"], [HOSTILE]),
             helper.make_node("Mul", ["x", "c"], ["ctl\x01\x1f&amp;"])]
    g = helper.make_graph(nodes, "hostile", [x], outs, [c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path.mkdir()
    (path / "model.onnx").write_bytes(m.SerializeToString())
    rng = np.random.default_rng(0)
    for k in range(2):
        d = path / f"test_data_set_{k}"
        d.mkdir()
        a = rng.standard_normal((2, 3)).astype(np.float32)
        (d / "input_0.pb").write_bytes(numpy_helper.from_array(a, "x").SerializeToString())
        y0 = a + np.array([1, 2, 3], np.float32)
        y1 = a * np.array([1, 2, 3], np.float32)
        if k == 1:
            y0 = y0 + 1  # fixture 1 fails output 0, so a failure carries the metrics
        (d / "output_0.pb").write_bytes(numpy_helper.from_array(y0, "y0").SerializeToString())
        (d / "output_1.pb").write_bytes(numpy_helper.from_array(y1, "y1").SerializeToString())
    return path


def test_junit_parses_strictly_with_hostile_names(onnxparity, tmp_path):
    b = _hostile_bundle(tmp_path / "hostile")
    xml_path = tmp_path / "j.xml"
    r = run([onnxparity, "check", b, "--junit", xml_path, "--no-lint"])
    assert r.returncode == 1, r.stderr
    raw = xml_path.read_bytes()
    raw.decode("utf-8")  # strict UTF-8
    xml.dom.minidom.parseString(raw)  # strict XML (expat)
    root = ET.fromstring(raw)
    suite = root.find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "1"
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    # the [2, 3] outputs count as classifiers: the last case carries the flip-rate bound
    assert cases == [("test_data_set_0", HOSTILE), ("test_data_set_0", "ctl??&amp;"),
                     ("test_data_set_1", HOSTILE), ("test_data_set_1", "ctl??&amp;"),
                     ("agreement", "top-1 agreement 8/8, flip rate at most 0.312 at 95% (Clopper-Pearson)")]
    fail = [c for c in root.iter("testcase") if c.find("failure") is not None][0]
    assert fail.get("name") == HOSTILE
    msg = fail.find("failure").get("message")
    for key in ("max_abs 1", "mismatches 6/6", "worst at index", "needed rtol", "atol"):
        assert key in msg, msg


def test_junit_write_is_atomic_and_reports_io_errors(onnxparity, tmp_path):
    r = run([onnxparity, "check", HEALTHY, "--junit", tmp_path / "no" / "dir" / "j.xml"])
    assert r.returncode == 3 and "j.xml" in r.stderr
    assert not (tmp_path / "no").exists()


# --- shards and merge --------------------------------------------------------

@pytest.mark.parametrize("bundle", [HEALTHY, TRAINING])
def test_shards_merge_to_the_full_verdict(onnxparity, tmp_path, bundle):
    full = run([onnxparity, "check", bundle, "--format", "json", "--top-k", "auto", "--no-bisect"])
    fdoc = json.loads(full.stdout)
    parts = []
    for i in range(2):
        p = tmp_path / f"s{i}.json"
        r = run([onnxparity, "check", bundle, "--shard", f"{i}/2", "--format", "json",
                 "--top-k", "auto", "--no-bisect"])
        p.write_text(r.stdout)
        d = json.loads(r.stdout)
        assert d["shard"] == {"index": i, "count": 2, "fixtures_total": 3}
        assert [f["index"] for f in d["fixtures"]] == [i, 2] if i == 0 else [1]
        parts.append(p)
    r = run([onnxparity, "merge", parts[1], parts[0], "--format", "json"])
    assert r.returncode == full.returncode, r.stderr
    m = json.loads(r.stdout)
    assert m["verdict"] == fdoc["verdict"]
    assert m["summary"] == fdoc["summary"]
    assert m["fixtures"] == fdoc["fixtures"]
    assert [c["id"] for c in m["causes"]] == [c["id"] for c in fdoc["causes"]]
    assert m["latent"] == fdoc["latent"]  # merge dropped it
    text = run([onnxparity, "merge", *parts])
    assert text.returncode == full.returncode and "3 fixtures" in text.stdout


def test_merge_refuses_mixed_models_and_missing_shards(onnxparity, tmp_path):
    docs = {}
    for name, b in (("h", HEALTHY), ("t", TRAINING)):
        for i in range(2):
            p = tmp_path / f"{name}{i}.json"
            p.write_text(run([onnxparity, "check", b, "--shard", f"{i}/2", "--format", "json",
                              "--no-bisect"]).stdout)
            docs[name, i] = p
    r = run([onnxparity, "merge", docs["h", 0], docs["t", 1]])
    assert r.returncode == 2 and "different models" in r.stderr
    assert run([onnxparity, "merge", docs["h", 0]]).returncode == 2  # shard 1 missing
    assert run([onnxparity, "merge", docs["h", 0], docs["h", 0]]).returncode == 2
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "onnxparity.bisect/1"}))
    assert run([onnxparity, "merge", docs["h", 0], other]).returncode == 2
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{")
    assert run([onnxparity, "merge", garbage]).returncode == 3


@pytest.mark.parametrize("flags,option", [(["--strict-tol"], "strict_tol"),
                                          (["--top-k", "3"], "top_k"),
                                          (["--no-noise-estimate"], "noise_estimate"),
                                          (["--no-lint"], "lint")])
def test_merge_refuses_shards_judged_with_other_options(onnxparity, tmp_path, flags, option):
    """A shard judged with another option would make the merged verdict a
    mix of two judgments: merge names the option and exits 2."""
    def shard(i, extra):
        p = tmp_path / f"s{i}{'x' if extra else ''}.json"
        r = run([onnxparity, "check", TRAINING, "--shard", f"{i}/2", "--format", "json",
                 "--no-bisect", *extra])
        assert r.returncode in (0, 1), r.stderr
        p.write_text(r.stdout)
        return p
    s0, s1, s1x = shard(0, []), shard(1, []), shard(1, flags)
    assert json.loads(s0.read_text())["options"] == {"top_k": "auto", "strict_tol": False,
                                                     "noise_estimate": True, "lint": True}
    r = run([onnxparity, "merge", s0, s1x])
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{s1x}: options.{option} " in r.stderr and f"from {s0}'s " in r.stderr, r.stderr
    assert "results judged with different options do not merge" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run([onnxparity, "merge", s0, s1, "--format", "json"])
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["options"] == json.loads(s0.read_text())["options"]


def test_shard_usage_errors(onnxparity):
    for bad in ("2/2", "1", "a/b", "0/0", "-1/2"):
        assert run([onnxparity, "check", HEALTHY, "--shard", bad]).returncode == 2, bad
