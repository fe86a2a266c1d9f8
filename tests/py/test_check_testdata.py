"""Must-show: `onnxparity check` on every case of Debian's libonnx-testdata
pytorch-converted/ and pytorch-operator/ (PyTorch modules exported to ONNX,
with eager outputs).  At least 95% pass; every case that does not is listed
with its reason; none ends in a tool error or a crash (exit 0 or 1 only)."""
import json

from conftest import run


def test_check_every_pytorch_case(onnxparity, testdata):
    cases = sorted(p for sub in ("pytorch-converted", "pytorch-operator")
                   for p in (testdata / sub).iterdir() if (p / "model.onnx").exists())
    assert len(cases) > 100
    failed, tool_errors = [], []
    for case in cases:
        r = run([onnxparity, "check", case])
        if r.returncode == 0:
            assert "verdict: pass" in r.stdout
            continue
        reason = (r.stderr.strip() or r.stdout.strip().splitlines()[-1])[:300]
        (failed if r.returncode == 1 else tool_errors).append(f"{case.name} (exit {r.returncode}): {reason}")
    print(f"\ncheck: {len(cases) - len(failed) - len(tool_errors)}/{len(cases)} pass")
    for line in failed + tool_errors:
        print("  not passing:", line)
    assert not tool_errors, "\n".join(tool_errors)
    assert len(failed) <= 0.05 * len(cases), "\n".join(failed)


def test_check_json_document(onnxparity, testdata):
    case = testdata / "pytorch-converted" / "test_Conv2d"
    r = run([onnxparity, "check", case, "--format", "json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "onnxparity.check/1" and doc["verdict"] == "pass"
    env = doc["environment"]
    assert env["ort_version"].count(".") == 2 and env["provider"] == "CPUExecutionProvider"
    assert len(env["model_sha256"]) == 64 and env["upgraded_to_opset7"] is True
    out = doc["fixtures"][0]["outputs"][0]
    assert out["pass"] and out["count"] == 2 * 4 * 5 * 4 and out["mismatches"] == 0
    assert doc["causes"] == [] and doc["first_divergent"] is None


def test_check_tolerance_zero_fails_and_reports(onnxparity, testdata, tmp_path):
    """With rtol = atol = 0 a convolution's float rounding shows.  The noise
    rule calls it float noise (exit 0, cause float-noise, the atol that covers
    it); --strict-tol makes the zero tolerance bind: exit 1, needed tolerance
    reported."""
    case = testdata / "pytorch-converted" / "test_Conv2d"
    r = run([onnxparity, "check", case, "--rtol", "0", "--atol", "0", "--format", "json"])
    doc = json.loads(r.stdout)
    out = doc["fixtures"][0]["outputs"][0]
    assert out["mismatches"] > 0  # ORT and the recorded eager output differ in the last bits
    assert r.returncode == 0 and doc["verdict"] == "pass"
    assert out["judgment"]["verdict"] == "within-noise"
    assert out["judgment"]["noise_source"] == "ort-perturbation"  # no float64 in this folder
    assert [c["id"] for c in doc["causes"]] == ["float-noise"]
    assert doc["causes"][0]["suggested_atol"] >= out["needed_atol"] > 0
    r = run([onnxparity, "check", case, "--rtol", "0", "--atol", "0", "--strict-tol",
             "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["verdict"] == "fail"
    assert doc["fixtures"][0]["outputs"][0]["needed_atol"] > 0


def test_check_without_fixtures_is_bad_input(onnxparity, tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"")
    r = run([onnxparity, "check", tmp_path])
    assert r.returncode == 2 and "nothing to compare" in r.stderr


def test_check_runtime_failure_of_one_fixture_is_a_failed_fixture(onnxparity, testdata, tmp_path):
    """A fixture whose input has the wrong shape fails with ORT's (or the
    pre-check's) message; the other fixtures still run."""
    import shutil
    src = testdata / "pytorch-converted" / "test_Conv2d"
    shutil.copy(src / "model.onnx", tmp_path / "model.onnx")
    shutil.copytree(src / "test_data_set_0", tmp_path / "test_data_set_0")
    bad = tmp_path / "test_data_set_1"
    bad.mkdir()
    shutil.copy(src / "test_data_set_0" / "output_0.pb", bad / "output_0.pb")
    r = run([onnxparity, "convert", testdata / "node" / "test_relu" / "test_data_set_0" / "input_0.pb",
             bad / "input_0.pb"])
    assert r.returncode == 0, r.stderr
    r = run([onnxparity, "check", tmp_path, "--format", "json"])
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    st = {f["index"]: f for f in doc["fixtures"]}
    assert st[0]["status"] == "pass" and st[1]["status"] == "error"
    assert "input" in st[1]["error"]


def test_noise_rerun_only_where_the_evidence_needs_it(onnxparity, testdata, tmp_path):
    """Issue 34: ONNX Runtime runs a fixture a second time (the one-ulp
    perturbation that estimates the noise) only where an output is beyond
    its tolerance with no float64 statistic, and the report says how many
    runs each fixture took and why.  A fault planted in the expected output
    (2e-3 added to every value: far beyond any perturbation spread of a
    convolution) still fails without a float64 reference."""
    import shutil
    import numpy as np
    from onnx import numpy_helper, load_tensor
    case = testdata / "pytorch-converted" / "test_Conv2d"
    within = json.loads(run([onnxparity, "check", case, "--format", "json"]).stdout)
    fx = within["fixtures"][0]
    assert fx["outputs"][0]["judgment"]["verdict"] == "within-tolerance"
    assert (fx["ort_runs"], fx["noise_rerun"]) == (1, "not-needed")
    beyond = json.loads(run([onnxparity, "check", case, "--rtol", "0", "--atol", "0",
                             "--format", "json"]).stdout)
    fx = beyond["fixtures"][0]
    assert fx["outputs"][0]["judgment"]["noise_source"] == "ort-perturbation"
    assert (fx["ort_runs"], fx["noise_rerun"]) == (2, "ran")
    off = json.loads(run([onnxparity, "check", case, "--rtol", "0", "--atol", "0",
                          "--no-noise-estimate", "--format", "json"]).stdout)
    assert (off["fixtures"][0]["ort_runs"], off["fixtures"][0]["noise_rerun"]) == (1, "off")
    # the text report: one line where a rerun ran or was wanted, none otherwise
    text = run([onnxparity, "check", case, "--rtol", "0", "--atol", "0"]).stdout
    assert ("noise    1 of 1 fixture(s) had an output beyond its tolerance with no float64 "
            "statistic: ONNX Runtime reran 1 with one-ulp perturbed inputs") in text
    text = run([onnxparity, "check", case, "--rtol", "0", "--atol", "0", "--no-noise-estimate"]).stdout
    assert "; 1 not rerun: --no-noise-estimate" in text
    assert "\nnoise    " not in run([onnxparity, "check", case]).stdout
    shutil.copy(case / "model.onnx", tmp_path / "model.onnx")
    shutil.copytree(case / "test_data_set_0", tmp_path / "test_data_set_0")
    out = tmp_path / "test_data_set_0" / "output_0.pb"
    t = load_tensor(str(out))
    planted = numpy_helper.from_array(numpy_helper.to_array(t) + np.float32(2e-3), t.name)
    out.write_bytes(planted.SerializeToString())
    r = run([onnxparity, "check", tmp_path, "--format", "json"])
    doc = json.loads(r.stdout)
    fx = doc["fixtures"][0]
    assert r.returncode == 1 and doc["verdict"] == "fail"
    assert (fx["ort_runs"], fx["noise_rerun"]) == (2, "ran")
    assert fx["outputs"][0]["judgment"]["verdict"] in ("beyond-noise", "beyond-tolerance")
