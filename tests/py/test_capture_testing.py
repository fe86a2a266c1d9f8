"""onnxparity.testing: the pytest helper over the binary's `check`."""
import json
import pathlib
import shutil

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402


import onnxparity  # noqa: E402
from onnxparity import testing  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")

import test_capture_models as models  # noqa: E402


@pytest.fixture(scope="session")
def binary(onnxparity):
    return onnxparity


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    out = tmp_path_factory.mktemp("good") / "b"
    g = torch.Generator().manual_seed(5)
    onnxparity.capture(models.small_net(), [torch.randn(b, 3, 16, 16, generator=g) for b in (2, 4)], out)
    return out


def test_passes_on_a_good_bundle(good, binary):
    doc = testing.assert_export_parity(good, binary=binary, rtol=1e-4, atol=1e-5, top_k="auto")
    assert doc["verdict"] == "pass" and doc["summary"]["fixtures"] == 2
    assert doc["summary"]["topk"]["flipped"] == 0


def test_raises_with_a_summary_on_a_broken_bundle(good, binary, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(good, broken)
    pb = broken / "test_data_set_1" / "output_0.pb"
    t = onnx.TensorProto()
    t.ParseFromString(pb.read_bytes())
    arr = numpy_helper.to_array(t).copy()
    arr[0] = -arr[0] * 3 + 1.0  # a wrong row: values off and the label flips
    pb.write_bytes(numpy_helper.from_array(arr, t.name).SerializeToString())
    with pytest.raises(AssertionError) as e:
        testing.assert_export_parity(broken, binary=binary, top_k="auto")
    msg = str(e.value)
    assert "export parity fails" in msg and "1 of 2 fixtures failed" in msg
    assert "test_data_set_1 output" in msg and "max_abs" in msg and "needs rtol" in msg
    assert "--top-k auto" in msg  # the command, to rerun by hand


def test_criteria_become_flags(good, binary):
    # a tolerance of 0 on a float graph that fuses BatchNorm into Conv: numbers differ in the last
    # bits; that is float noise (parity holds) unless the tolerance is made to bind
    doc = testing.assert_export_parity(good, binary=binary, rtol=0, atol=0, opt_level="disable",
                                       threads=1)
    assert doc["summary"]["outputs_within_noise"] > 0
    assert [c["id"] for c in doc["causes"]] == ["float-noise"]
    with pytest.raises(AssertionError, match="elements differ"):
        testing.assert_export_parity(good, binary=binary, rtol=0, atol=0, opt_level="disable",
                                     threads=1, strict_tol=True)
    args = testing._flags({"tol": {"output": (1e-3, 1e-4)}, "session_config": {"a.b": "1"},
                           "deterministic": True, "top_k": 1})
    assert args == ["--tol", "output=0.001,0.0001", "--session-config", "a.b=1", "--deterministic",
                    "--top-k", "1"]
    with pytest.raises(TypeError, match="unknown criteria"):
        testing.assert_export_parity(good, binary=binary, tolerance=1)


def test_unreadable_bundle_is_a_failure_with_the_tools_message(good, binary, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    (bad / "test_data_set_0" / "input_0.pb").write_bytes(b"\x0a\xff\xff")
    with pytest.raises(AssertionError, match="could not judge|fails"):
        testing.assert_export_parity(bad, binary=binary)


def test_binary_lookup(monkeypatch, tmp_path, binary):
    monkeypatch.setenv("ONNXPARITY_BIN", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="ONNXPARITY_BIN"):
        testing.find_binary()
    monkeypatch.setenv("ONNXPARITY_BIN", binary)
    assert testing.find_binary() == binary
    monkeypatch.delenv("ONNXPARITY_BIN")
    found = testing.find_binary()  # the repository's build/onnxparity, else PATH
    assert pathlib.Path(found).name == "onnxparity"


def test_manifest_hints_in_the_summary(binary, tmp_path):
    out = tmp_path / "t"
    g = torch.Generator().manual_seed(6)
    onnxparity.capture(models.small_net_training(), [torch.randn(4, 3, 16, 16, generator=g)], out,
                       allow_training=True, exporter="legacy")  # dynamo refuses training BatchNorm
    with pytest.raises(AssertionError) as e:
        testing.assert_export_parity(out, binary=binary)
    assert "module(s) in training mode" in str(e.value)
    manifest = json.loads((out / "parity.json").read_text())
    assert manifest["training"]["any"] is True
