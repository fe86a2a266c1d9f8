"""A float64 reference that measures nothing is no noise source (issue 36).

A reference64/output_J.pb of NaN or Inf in every element left no finite
pair: both distances read "0 over no finite element", the noise rule read
0 <= 4 * 0 + U, and an output ORT shifted by 0.05 passed as "ok (float
noise)".  NaN/Inf are compared as positions now: such a reference is refused
(judgment.reference_refused, a note), the next noise source judges (the
noise book, else the ORT-side estimate), and `check` exits 1.  A healthy
reference still passes.  The bundles are made by hand: an Identity model,
one fixture, eager output and reference64 written here.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_nonfinite_reference.py
"""
import json

import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from conftest import run  # noqa: E402

# [1, 2, 4]: not a classifier shape (no top-1 check), one row (not constant)
X = np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(1, 2, 4)


def make_bundle(root, eager, ref64, parity=None, x=X):
    """model.onnx: y = Identity(x); test_data_set_0 with input x, output
    `eager` (float32) and reference64/output_0.pb `ref64` (float64)."""
    root.mkdir(parents=True)
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="id")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(root / "model.onnx"))
    d = root / "test_data_set_0"
    (d / "reference64").mkdir(parents=True)
    (d / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (d / "output_0.pb").write_bytes(
        numpy_helper.from_array(eager.astype(np.float32), "y").SerializeToString())
    (d / "reference64" / "output_0.pb").write_bytes(
        numpy_helper.from_array(ref64.astype(np.float64), "y").SerializeToString())
    if parity is not None:
        (root / "parity.json").write_text(json.dumps(parity))
    return root


def check(binary, bundle):
    r = run([binary, "check", bundle, "--format", "json"])
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    return r.returncode, doc, doc["fixtures"][0]["outputs"][0]


FILLS = [np.nan, np.inf, -np.inf]


@pytest.mark.parametrize("fill", FILLS, ids=["nan", "inf", "-inf"])
def test_nonfinite_reference_does_not_pass_a_shifted_output(onnxparity, tmp_path, fill):
    b = make_bundle(tmp_path / "b", X - 0.05, np.full(X.shape, fill))
    code, doc, out = check(onnxparity, b)
    j = out["judgment"]
    assert code == 1 and doc["verdict"] == "fail" and not out["pass"], json.dumps(out)[:2000]
    assert j["verdict"] == "beyond-noise" and j["noise_source"] == "ort-perturbation"
    assert j["reference_refused"] == 8 and "ort_vs_float64" not in j
    assert "float64 reference refused as a noise source: 8 element(s)" in out["note"]
    assert "noise from ort-perturbation" in out["note"]
    # the text report: FAIL, never "ok (float noise)"
    r = run([onnxparity, "check", b])
    assert r.returncode == 1 and "FAIL" in r.stdout and "float noise)" not in r.stdout
    assert "float64 reference refused" in r.stdout


def test_nonfinite_reference_without_estimate_is_beyond_tolerance(onnxparity, tmp_path):
    """No noise left at all (--no-noise-estimate): the tolerance alone decides."""
    b = make_bundle(tmp_path / "b", X - 0.05, np.full(X.shape, np.nan))
    r = run([onnxparity, "check", b, "--no-noise-estimate", "--format", "json"])
    out = json.loads(r.stdout)["fixtures"][0]["outputs"][0]
    assert r.returncode == 1 and out["judgment"]["verdict"] == "beyond-tolerance"
    assert out["note"].endswith("no other noise estimate")


def test_one_nan_where_eager_has_a_number_refuses_the_reference(onnxparity, tmp_path):
    ref = X.astype(np.float64) - 0.05
    ref[0, 1, 2] = np.nan
    b = make_bundle(tmp_path / "b", X - 0.05, ref)
    code, _, out = check(onnxparity, b)
    assert code == 1 and out["judgment"]["reference_refused"] == 1


def test_noise_book_is_the_next_source(onnxparity, tmp_path):
    """The capture's float64 statistics of the fixture judge when its
    reference tensor is refused: noise this large (0.02 of a scale 2) calls
    the 0.05 shift noise, and says where the noise came from."""
    noise = {"reference": "float64", "reason": None, "policy": {"per_shape_group": 2},
             "fixtures_covered": [0], "seconds": 0.1, "memory_format": "contiguous",
             "memory_note": None,
             "fixtures": [{"fixture": 0, "dir": "test_data_set_0",
                           "outputs": [{"name": "y", "file": "reference64/output_0.pb",
                                        "max_abs": 0.015, "rms": 0.015, "q999": 0.015,
                                        "scale_max": 2.0, "scale_rms": 1.2, "count": 8,
                                        "nonfinite": 0}]}]}
    b = make_bundle(tmp_path / "b", X - 0.05, np.full(X.shape, np.nan), {"noise": noise})
    r = run([onnxparity, "check", b, "--format", "json"])
    assert r.returncode == 0, r.stderr + r.stdout[-2000:]
    out = json.loads(r.stdout)["fixtures"][0]["outputs"][0]
    assert out["judgment"]["verdict"] == "within-noise"
    assert out["judgment"]["noise_source"] == "float64" and out["judgment"]["reference_refused"] == 8
    assert "noise from float64" in out["note"]


def test_healthy_reference_still_passes(onnxparity, tmp_path):
    # eager and float64 agree, ORT equals eager: within tolerance, reference used
    b = make_bundle(tmp_path / "b", X, X.astype(np.float64))
    code, doc, out = check(onnxparity, b)
    assert code == 0 and doc["verdict"] == "pass" and out["pass"]
    assert out["judgment"]["verdict"] == "within-tolerance"
    assert "reference_refused" not in out["judgment"] and "note" not in out
    # eager one float32 ulp off float64, ORT exact: beyond a zero tolerance,
    # within the noise the reference measures
    eager = np.nextafter(X, np.float32(np.inf))
    b = make_bundle(tmp_path / "c", eager, X.astype(np.float64))
    r = run([onnxparity, "check", b, "--rtol", "0", "--atol", "0", "--format", "json"])
    assert r.returncode == 0, r.stdout[-2000:]
    j = json.loads(r.stdout)["fixtures"][0]["outputs"][0]["judgment"]
    assert j["verdict"] == "within-noise" and j["noise_source"] == "float64"
    assert j["ort_vs_float64"]["max_abs"] == 0 and "reference_refused" not in j


def test_nan_at_the_same_positions_keeps_the_reference(onnxparity, tmp_path):
    """NaN at the same position in the input (so in ORT's output), eager and
    float64: positions agree, the reference stands, and it still judges the
    shifted finite elements (beyond its noise).  Unshifted, it passes."""
    x = X.copy()
    x[0, 0, 1] = np.nan
    b = make_bundle(tmp_path / "b", x - 0.05, x.astype(np.float64) - 0.05, x=x)
    code, _, out = check(onnxparity, b)
    j = out["judgment"]
    assert code == 1 and j["verdict"] == "beyond-noise" and j["noise_source"] == "float64"
    assert "reference_refused" not in j and j["ort_vs_float64"]["max_abs"] > 0.04
    b = make_bundle(tmp_path / "c", x, x.astype(np.float64), x=x)
    code, _, out = check(onnxparity, b)
    assert code == 0 and out["pass"] and "reference_refused" not in out["judgment"]
