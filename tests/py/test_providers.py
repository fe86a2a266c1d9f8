"""Another execution provider and the precision it computes in (issue 29):
real bundles (torchvision's resnet18 and a small BERT from transformers,
captured here) checked under the OpenVINO execution provider of the
onnxruntime-openvino package, the test environment's deployment target
(scripts/setup.sh venv; found as ``python -m onnxparity.ortlib --package
onnxruntime-openvino`` finds it).  At OpenVINO's default (float32 on this
CPU) both pass; with bf16 forced through INFERENCE_PRECISION_HINT the cause
is reduced-precision with the setting named, the failing outputs inside
their bf16-scaled envelope and not inside float32's; a weight planted x1.5
under bf16 is named at its own node (the node the CPU provider names), not
at the first Conv where bf16's error starts.  Skips where the package is
absent (Debian's python: it lives in the torch 2.x environment).
"""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
tv = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")

import onnxparity  # noqa: E402
from onnxparity import ortlib  # noqa: E402

from conftest import cpu_flags, run  # noqa: E402

def _native_bf16():
    """Whether this CPU computes bf16 natively (AVX512_BF16 or AMX).  Without
    it OpenVINO's CPU plugin takes the bf16 hint and computes in float32
    (measured on an AVX2 host: the same outputs with and without it), so
    there is no bf16 error to find or to name."""
    return bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})


needs_bf16 = pytest.mark.skipif(not _native_bf16(), reason="no native bf16 on this CPU (avx512_bf16, "
                                "amx_bf16): OpenVINO computes the bf16 hint in float32 here")

PACKAGE = "onnxruntime-openvino"
BF16 = 'load_config={"CPU":{"INFERENCE_PRECISION_HINT":"bf16"}}'
EPS_BF16 = 2.0 ** -7


@pytest.fixture(scope="module")
def ovlib():
    try:
        return ortlib.find(PACKAGE)
    except LookupError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module")
def bundles(tmp_path_factory, ovlib):
    d = tmp_path_factory.mktemp("providers")
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    r18 = tv.models.resnet18(num_classes=10).eval()
    onnxparity.capture(r18, [torch.randn(2, 3, 64, 64, generator=g) for _ in range(2)], d / "resnet18")
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(vocab_size=200, hidden_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=128,
                                  max_position_embeddings=64)

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = transformers.BertModel(cfg).eval()

        def forward(self, ids):
            return self.bert(input_ids=ids).last_hidden_state

    onnxparity.capture(Bert().eval(), [torch.randint(0, 200, (2, 16), generator=g) for _ in range(2)],
                       d / "bert")
    return d


def check(binary, bundle, lib, *args):
    r = run([binary, "check", bundle, "--format", "json", "--ort-lib", lib, *args])
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def openvino(binary, bundle, lib, *opts):
    args = ["--provider", "openvino"]
    for o in opts:
        args += ["--provider-opt", o]
    return check(binary, bundle, lib, *args)


def test_the_target_is_found_beside_the_environments_onnxruntime(ovlib):
    path, version = ovlib
    p = subprocess.run([sys.executable, "-m", "onnxparity.ortlib", "--package", PACKAGE],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert p.returncode == 0 and p.stdout.strip() == str(path), p.stderr
    assert (path.parent / "libonnxruntime_providers_openvino.so").is_file()
    # the environment's own onnxruntime is still the one `import onnxruntime` finds
    own_path, own_version = ortlib.find()
    assert own_path != path and own_version != version
    p = subprocess.run([sys.executable, "-m", "onnxparity.ortlib", "--package", "no-such-ort"],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert p.returncode == 1 and "no no-such-ort package" in p.stderr


@pytest.mark.parametrize("name", ["resnet18", "bert"])
def test_default_passes(binary, bundles, ovlib, name):
    rc, doc = openvino(binary, bundles / name, ovlib[0])
    assert rc == 0 and doc["verdict"] == "pass"
    env = doc["environment"]
    assert env["provider"] == "OpenVINOExecutionProvider" and env["ort_version"] == ovlib[1]
    assert not any(c["id"] == "reduced-precision" for c in doc["causes"])


def failing_outputs(doc):
    return [o for f in doc["fixtures"] for o in f["outputs"] if not o["pass"]]


@needs_bf16
@pytest.mark.parametrize("name,confidence", [("resnet18", "high"), ("bert", "medium")])
def test_bf16_is_reduced_precision(binary, bundles, ovlib, name, confidence):
    rc, doc = openvino(binary, bundles / name, ovlib[0], BF16)
    assert rc == 1 and doc["verdict"] == "fail"
    top = doc["causes"][0]
    assert top["id"] == "reduced-precision" and top["confidence"] == confidence, doc["causes"]
    assert any("OpenVINOExecutionProvider computes in bf16" in e and
               "INFERENCE_PRECISION_HINT=bf16" in e for e in top["evidence"])
    assert '"INFERENCE_PRECISION_HINT":"f32"' in top["fix"] and "--atol" in top["fix"]
    # beyond float32's envelope, inside bf16's: measured here, not read back
    bad = failing_outputs(doc)
    assert bad
    for o in bad:
        j = o["judgment"]
        assert j["verdict"] == "beyond-noise" and o["max_abs"] > j["envelope"]["max_abs"]
        scale = j["noise"]["scale_max"]
        assert 2.0 ** -23 * scale < o["max_abs"] <= 8 * EPS_BF16 * scale
    assert any("within the bf16 envelope" in e for e in top["evidence"])
    # the tolerance it names makes the same target pass
    atol = top["suggested_atol"]
    assert atol > max(o["max_abs"] for o in bad)
    rc2, doc2 = check(binary, bundles / name, ovlib[0], "--provider", "openvino",
                      "--provider-opt", BF16, "--atol", f"{atol:.3g}")
    assert rc2 == 0 and doc2["verdict"] == "pass"
    if confidence == "high":  # resnet18: the error starts at the first Conv
        fd = doc["first_divergent"]
        assert fd["op_type"] == "Conv" and top["node"] == fd["node"]
        assert any("the first matmul-class value" in e for e in top["evidence"])


@pytest.fixture(scope="module")
def planted(bundles, tmp_path_factory):
    """resnet18 with layer3.0.conv2's weight x1.5 in model.onnx; eager's
    outputs and intermediates are the unplanted model's."""
    import shutil

    import numpy as np
    from onnx import numpy_helper

    d = tmp_path_factory.mktemp("planted") / "resnet18"
    shutil.copytree(bundles / "resnet18", d)
    m = onnx.load(str(d / "model.onnx"))
    hit = [i for i in m.graph.initializer if i.name == "layer3.0.conv2.weight"]
    assert len(hit) == 1, [i.name for i in m.graph.initializer][:20]
    w = numpy_helper.to_array(hit[0]) * np.float32(1.5)
    hit[0].CopyFrom(numpy_helper.from_array(w.astype(np.float32), hit[0].name))
    onnx.save(m, str(d / "model.onnx"))
    consumer = [n.name for n in m.graph.node if "layer3.0.conv2.weight" in n.input]
    assert len(consumer) == 1
    return d, consumer[0]


@needs_bf16
def test_planted_weight_under_bf16_is_named_at_its_node(binary, planted, ovlib):
    bundle, node = planted
    # the CPU provider (the tool's own ORT, float32) names the planted node
    r = run([binary, "check", bundle, "--format", "json"])
    assert r.returncode == 1, r.stderr
    cpu = json.loads(r.stdout)
    assert cpu["causes"][0]["node"] == node
    rc, doc = openvino(binary, bundle, ovlib[0], BF16)
    assert rc == 1
    top = doc["causes"][0]
    assert top["node"] == node and top["id"] == "unknown" and top["confidence"] == "medium"
    assert doc["first_divergent"]["node"] != node  # bf16's error starts earlier, at the first Conv
    assert any("leaves what bf16 allows" in e for e in top["evidence"])
    rp = [c for c in doc["causes"] if c["id"] == "reduced-precision"]
    assert rp and rp[0]["confidence"] == "low"


def test_provider_option_errors_name_the_option(binary, bundles, ovlib):
    lib = str(ovlib[0])
    r = run([binary, "check", bundles / "resnet18", "--ort-lib", lib, "--provider", "openvino",
             "--provider-opt", "precision=BF16"])
    assert r.returncode == 2
    assert "precision=BF16" in r.stderr and "accepts FP32 or ACCURACY" in r.stderr
    assert "INFERENCE_PRECISION_HINT" in r.stderr
    r = run([binary, "check", bundles / "resnet18", "--ort-lib", lib, "--provider", "openvino",
             "--provider-opt", "no_such_option=1"])
    assert r.returncode == 4
    assert "has no option 'no_such_option'" in r.stderr and "load_config" in r.stderr
    r = run([binary, "check", bundles / "resnet18", "--ort-lib", lib, "--provider", "openvino",
             "--provider-opt", "device_type=NPU"])
    assert r.returncode == 4 and "NPU" in r.stderr and "ORT logged" in r.stderr


def test_capture_records_the_environments_onnxruntime(bundles):
    import hashlib
    import importlib.metadata

    rec = json.loads((bundles / "resnet18" / "parity.json").read_text())["onnxruntime"]
    path, version = ortlib.find()  # the package `import onnxruntime` loads, not the target
    assert rec["package"] == "onnxruntime" and rec["version"] == version
    assert rec["version"] == importlib.metadata.version("onnxruntime")
    assert rec["library"] == str(path.resolve())
    assert rec["library_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


@needs_bf16
def test_diagnose_names_the_precision_not_the_provider(binary, bundles, ovlib):
    """diagnose adds the sweep, whose CPU column passes where OpenVINO in bf16
    fails: that is the precision's evidence, not an execution-provider bug
    (the cause diagnose gave before, with "report the operator upstream")."""
    r = run([binary, "diagnose", bundles / "resnet18", "--format", "json", "--ort-lib", ovlib[0],
             "--provider", "openvino", "--provider-opt", BF16])
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    ids = [c["id"] for c in doc["causes"]]
    assert ids[0] == "reduced-precision" and "execution-provider" not in ids, doc["causes"]
    top = doc["causes"][0]
    assert any("the CPU provider passes" in e for e in top["evidence"])


def test_gate_over_the_cpu_and_openvino_targets(binary, bundles, planted, ovlib, tmp_path):
    """One criteria file for two deployment targets that differ in library and
    provider (issue 29, Must-show 3): the tool's ORT on the CPU provider, and
    onnxruntime-openvino on OpenVINO with its precision hint pinned to f32.
    The healthy resnet18 passes both; the planted weight regresses under
    both, each regression naming its target, each target's run on its own
    provider."""
    crit = tmp_path / "criteria.json"
    pin = 'ov=load_config={"CPU":{"INFERENCE_PRECISION_HINT":"f32"}}'
    r = run([binary, "gate", bundles / "resnet18", "--criteria", crit, "--record",
             "--target", "cpu=bundled", "--target", f"ov={ovlib[0]}",
             "--target-provider", "ov=openvino", "--target-provider-opt", pin])
    assert r.returncode == 0, r.stderr
    doc = json.loads(crit.read_text())
    cpu, ov = doc["targets"]
    assert cpu["provider"] is None and cpu["environment"]["provider"] == "CPUExecutionProvider"
    assert ov["provider"] == "openvino" and ov["provider_options"] == [pin[3:]]
    assert ov["environment"]["provider"] == "OpenVINOExecutionProvider"
    assert ov["environment"]["ort_version"] == ovlib[1]
    r = run([binary, "gate", bundles / "resnet18", "--criteria", crit, "--format", "json"])
    assert r.returncode == 0, r.stdout
    g = json.loads(r.stdout)
    assert [(t["name"], t["provider"], t["verdict"]) for t in g["targets"]] == [
        ("cpu", "CPUExecutionProvider", "pass"), ("ov", "OpenVINOExecutionProvider", "pass")]
    r = run([binary, "gate", planted[0], "--criteria", crit, "--format", "json", "--no-bisect"])
    assert r.returncode == 1, r.stderr
    g = json.loads(r.stdout)
    assert [t["verdict"] for t in g["targets"]] == ["fail", "fail"]
    assert {x["target"] for x in g["regressions"]} == {"cpu", "ov"}
