"""Capture (python/onnxparity) end to end: real torchvision models with random
weights, real torch.onnx exports, ONNX Runtime through the onnxparity binary.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_capture*.py
"""
import json
import pathlib
import warnings

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")


import onnxparity  # noqa: E402
from conftest import expected_exporter  # noqa: E402
from onnxparity import (CaptureError, FixtureError, ForwardError, OutputError,  # noqa: E402
                        TrainingModeError)
from onnxparity.testing import (assert_export_parity, assert_intermediates_parity,  # noqa: E402
                                run_check)

import test_capture_models as models  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning",
                                        "ignore::UserWarning")


def images(*batches, size=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, 3, size, size, generator=g) for b in batches]


def manifest(bundle):
    return json.loads((pathlib.Path(bundle) / "parity.json").read_text())


def leftovers(parent, name):
    """The bundle itself or any temporary folder of it."""
    return sorted(p.name for p in pathlib.Path(parent).iterdir()
                  if p.name == name or p.name.startswith(f".{name}."))


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module")
def resnet_bundle(tmp_path_factory):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    out = tmp_path_factory.mktemp("resnet") / "bundle"
    # batch 1 first; the traced one is batch 3 ("auto"): torch.export specializes a dim of size 1
    onnxparity.capture(model, images(1, 3, seed=1), out, trace_fixture="auto")
    return out


# ---------------------------------------------------------------- 1. parity on real models

def test_resnet18_bundle_passes_check(resnet_bundle, binary):
    doc = assert_export_parity(resnet_bundle, binary=binary, top_k="auto")
    assert doc["summary"]["fixtures"] == 2 and doc["summary"]["outputs_failed"] == 0
    m = manifest(resnet_bundle)
    assert m["schema"] == "onnxparity.capture/1"
    assert m["exporter"] == expected_exporter() and m["exporter_fallback"] is None and m["opset"] >= 9
    assert m["versions"]["torch"] == torch.__version__
    assert m["deterministic"] is True
    assert m["export_args"]["dynamic"] == {"x": {"0": "batch"}, "output": {"0": "batch"}}
    assert m["training"]["any"] is False and m["training"]["flags"]["layer1.0.bn1"] is False
    assert [f["inputs"][0]["shape"] for f in m["fixtures"]] == [[1, 3, 64, 64], [3, 3, 64, 64]]
    for k in range(2):
        d = resnet_bundle / f"test_data_set_{k}"
        assert (d / "input_0.pb").is_file() and (d / "output_0.pb").is_file()


def test_mobilenet_v3_small_passes_check(tmp_path, binary):
    torch.manual_seed(1)
    model = torchvision.models.mobilenet_v3_small(num_classes=10).eval()
    doc = onnxparity.capture(model, images(2, 5, seed=2), tmp_path / "b")
    assert doc["mapping"]["rate"] >= 0.9
    assert_export_parity(tmp_path / "b", binary=binary, top_k="auto")
    assert_intermediates_parity(tmp_path / "b", 1, binary=binary, rtol=1e-3, atol=1e-4)


def test_transformer_encoder_passes_check(tmp_path, binary):
    model = models.transformer_encoder()
    g = torch.Generator().manual_seed(3)
    fixtures = [torch.randn(1, 6, 32, generator=g), torch.randn(4, 6, 32, generator=g),
                torch.randn(2, 9, 32, generator=g)]
    doc = onnxparity.capture(model, fixtures, tmp_path / "b", dynamic_axes="auto", trace_fixture="auto")
    assert doc["export_args"]["dynamic"]["src"] == {"0": "batch", "1": "src_dim1"}
    assert_export_parity(tmp_path / "b", binary=binary, rtol=1e-4, atol=1e-4)
    if doc["exporter"] == "legacy":
        # eager under no_grad takes the fused fast path; the trace (autograd on) does not
        assert doc["eager_vs_trace"]["same_modules_called"] is False
        assert doc["intermediates"]["forward_grad_enabled"] is True
    else:
        # torch.export traces under no_grad like the eager truth: the same modules are called
        assert doc["eager_vs_trace"]["same_modules_called"] is True
        assert doc["mapping"]["rate_called"] >= 0.9, doc["mapping"]["unmapped"]
    assert_intermediates_parity(tmp_path / "b", 1, binary=binary, rtol=1e-3, atol=1e-4)


def test_keyword_inputs_and_dict_outputs(tmp_path, binary):
    model = models.TwoInputs().eval()
    g = torch.Generator().manual_seed(4)
    fixtures = [(torch.randn(b, 6, generator=g), {"scale": torch.randn(b, 2, generator=g)}) for b in (1, 3)]
    doc = onnxparity.capture(model, fixtures, tmp_path / "b")
    assert [i["name"] for i in doc["inputs"]] == ["x", "scale"]
    assert [o["name"] for o in doc["outputs"]] == ["sum", "prod"]
    assert_export_parity(tmp_path / "b", binary=binary)


def test_input_pruned_by_the_exporter_is_recorded(tmp_path, binary):
    g = torch.Generator().manual_seed(7)
    fixtures = [tuple(torch.randn(b, 4, generator=g) for _ in range(3)) for b in (1, 2)]
    doc = onnxparity.capture(models.UnusedInput().eval(), fixtures, tmp_path / "b")
    if doc["exporter"] == "legacy":
        assert [i["name"] for i in doc["inputs"]] == ["x", "y"]
        assert [p["name"] for p in doc["pruned_inputs"]] == ["unused"]
        kept = ["input_0.pb", "input_1.pb"]
    else:  # the dynamo exporter keeps every input of the forward
        assert [i["name"] for i in doc["inputs"]] == ["x", "unused", "y"] and doc["pruned_inputs"] == []
        kept = ["input_0.pb", "input_1.pb", "input_2.pb"]
    assert sorted(p.name for p in (tmp_path / "b/test_data_set_0").glob("input_*.pb")) == kept
    assert_export_parity(tmp_path / "b", binary=binary)


# ---------------------------------------------------------------- 2. module -> value map

def test_resnet18_mapping_rate_and_intermediates_agree(resnet_bundle, binary):
    m = manifest(resnet_bundle)
    s = m["mapping"]
    assert s["leaf_modules"] == 52
    assert s["leaf_mapped"] / s["leaf_modules"] >= 0.9, s["unmapped"]
    # BatchNorm folded into Conv (EVAL export): the Conv node's value is the BatchNorm's output
    assert {"module": "layer1.0.conv1", "type": "Conv2d", "fused_into": "layer1.0.bn1"} in s["fused"]
    index = json.loads((resnet_bundle / "test_data_set_0/intermediates/index.json").read_text())
    files = {e["file"] for e in index["entries"]}
    if m["exporter"] == "legacy":
        assert m["module_map"]["layer1.0.bn1"] == "/layer1/layer1.0/conv1/Conv_output_0"
        # a module called twice maps once per call
        assert m["module_map"]["layer1.0.relu#1"] == "/layer1/layer1.0/relu_1/Relu_output_0"
        assert "layer1_layer1.0_conv1_Conv_output_0.pb" in files
    else:  # dynamo: values carry the exported program's node names
        made_by = {o: n.op_type for n in onnx.load(str(resnet_bundle / "model.onnx")).graph.node
                   for o in n.output}
        assert made_by[m["module_map"]["layer1.0.bn1"]] == "Conv"
        assert m["module_map"]["layer1.0.conv1"] == m["module_map"]["layer1.0.bn1"]
        r0, r1 = m["module_map"]["layer1.0.relu"], m["module_map"]["layer1.0.relu#1"]
        assert r0 != r1 and made_by[r0] == made_by[r1] == "Relu"
        assert s["method"] == "dynamo-module-stack"
    assert all(set(f) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
               for f in files)
    for k in range(2):
        res = assert_intermediates_parity(resnet_bundle, k, binary=binary, rtol=1e-3, atol=1e-4)
        assert len(res) == len(index["entries"]) >= 40


# ---------------------------------------------------------------- 3. training mode

def test_training_mode_is_refused_naming_modules(tmp_path):
    model = models.small_net_training()
    with pytest.raises(TrainingModeError) as e:
        onnxparity.capture(model, images(2, size=16), tmp_path / "b")
    assert "head.1 (Dropout)" in str(e.value) and "features.1 (BatchNorm2d)" in str(e.value)
    assert "head.1" in e.value.modules and "<root>" in e.value.modules
    assert leftovers(tmp_path, "b") == []
    assert all(m.training for m in model.modules())  # flags untouched


def test_allow_training_records_flags_and_check_fails(tmp_path, binary):
    model = models.small_net_training()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    # the legacy exporter: torch 2.9's dynamo exporter refuses BatchNorm in
    # training mode (test_dynamo.py)
    doc = onnxparity.capture(model, images(2, 4, size=16), tmp_path / "b", allow_training=True,
                             exporter="legacy")
    t = doc["training"]
    assert t["any"] is True and t["export_mode"] == "PRESERVE" and t["eager_mode"] == "eval"
    assert t["flags"]["head.1"] is True and "features.1" in t["modules_in_training"]
    rc, res, err, _ = run_check(tmp_path / "b", binary=binary, opt_level="disable")
    assert rc == 1 and res["verdict"] == "fail", err
    with pytest.raises(AssertionError, match="training mode"):
        assert_export_parity(tmp_path / "b", binary=binary)
    # tracing in training mode must not leave BatchNorm statistics changed
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(m.training for m in model.modules())


# ---------------------------------------------------------------- 4. traced control flow

def test_tracer_warning_lands_in_manifest_with_file_and_line(tmp_path, binary):
    src = pathlib.Path(models.__file__).read_text().splitlines()
    line = next(i for i, s in enumerate(src, 1) if "BRANCH-LINE" in s)
    model = models.Branchy().eval()
    pos, neg = torch.ones(2, 4), -torch.ones(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # TracerWarnings are the legacy exporter's; dynamo refuses the branch (test_dynamo.py)
        doc = onnxparity.capture(model, [pos, neg], tmp_path / "b", exporter="legacy")
    tracer = [w for w in doc["warnings"] if w["category"] == "TracerWarning"]
    assert tracer, doc["warnings"]
    w = tracer[0]
    assert pathlib.Path(w["file"]).name == "test_capture_models.py" and w["line"] == line
    assert w["where"].endswith(f"test_capture_models.py:{line}") and "x.sum() > 0" in w["code"]
    # the graph holds the branch of the traced fixture only: the other fixture fails
    rc, res, _, _ = run_check(tmp_path / "b", binary=binary)
    assert rc == 1 and [f["status"] for f in res["fixtures"]] == ["pass", "fail"]


def test_fixture_taking_another_module_path_has_no_intermediates(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = onnxparity.capture(models.ModuleBranch().eval(), [torch.ones(2, 4), -torch.ones(2, 4)],
                                 tmp_path / "b", exporter="legacy")  # a traced branch
    f0, f1 = doc["fixtures"]
    assert f0["intermediates"] == 1 and "intermediates_skipped" not in f0
    assert f1["intermediates"] == 0 and "data-dependent" in f1["intermediates_skipped"]
    assert not (tmp_path / "b/test_data_set_1/intermediates").exists()
    assert doc["module_map"] == {"pos": "output"}
    assert any(u["module"] == "neg" and "never called" in u["reason"] for u in doc["mapping"]["unmapped"])


# ---------------------------------------------------------------- 5. submodules

def test_export_submodules_gives_passing_bundles(tmp_path, binary):
    model = models.backbone_head()
    doc = onnxparity.export_submodules(model, images(1, 5, size=16), tmp_path / "parts",
                                       ["backbone", "head"])
    assert [s["module"] for s in doc["submodules"]] == ["backbone", "head"]
    for name in ("backbone", "head"):
        b = tmp_path / "parts" / name
        assert_export_parity(b, binary=binary)
        m = manifest(b)
        assert m["source"]["module"] == name and len(m["fixtures"]) == 2
    # the head was fed the activations the backbone really produced
    head_in = manifest(tmp_path / "parts/head")["fixtures"][1]["inputs"][0]["shape"]
    assert head_in == [5, 16, 8, 8]
    with pytest.raises(CaptureError, match="no submodule 'neck'"):
        onnxparity.export_submodules(model, images(1, size=16), tmp_path / "p2", ["backbone", "neck"])
    assert leftovers(tmp_path, "p2") == []


# ---------------------------------------------------------------- 6. bad input

@pytest.mark.parametrize("fixtures", ["not a tensor", 3, None, [object()], {"x": "text"}, [],
                                      (torch.ones(1, 4), [])], ids=["str", "int", "none", "object",
                                                                    "dict-of-str", "empty", "empty-tuple"])
def test_unsupported_fixtures_are_refused(tmp_path, fixtures):
    with pytest.raises(FixtureError):
        onnxparity.capture(models.Branchy().eval(), fixtures, tmp_path / "b")
    assert leftovers(tmp_path, "b") == []


def test_fixtures_with_different_structure_are_refused(tmp_path):
    with pytest.raises(FixtureError, match="fixture 1 differs"):
        onnxparity.capture(models.Branchy().eval(), [torch.ones(1, 4), torch.ones(1, 4, dtype=torch.int64)],
                           tmp_path / "b")


def test_forward_that_raises(tmp_path):
    with pytest.raises(ForwardError, match="deliberate failure") as e:
        onnxparity.capture(models.Raises().eval(), torch.ones(2, 4), tmp_path / "b")
    assert isinstance(e.value.__cause__, RuntimeError)
    assert leftovers(tmp_path, "b") == []


def test_non_tensor_output(tmp_path):
    with pytest.raises(OutputError, match=r"output\[1\] is str"):
        onnxparity.capture(models.NonTensorOut().eval(), torch.ones(2, 4), tmp_path / "b")
    assert leftovers(tmp_path, "b") == []


def test_failed_export_leaves_nothing(tmp_path):
    with pytest.raises(CaptureError):
        onnxparity.capture(models.Branchy().eval(), torch.ones(2, 4), tmp_path / "b", opset=99)
    assert leftovers(tmp_path, "b") == []


def test_existing_bundle_is_replaced_other_folders_are_not(tmp_path, binary):
    model = models.small_net()
    onnxparity.capture(model, images(2, size=16), tmp_path / "b")
    onnxparity.capture(model, images(2, 3, size=16), tmp_path / "b")
    assert len(manifest(tmp_path / "b")["fixtures"]) == 2 and leftovers(tmp_path, "b") == ["b"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(CaptureError, match="not an onnxparity bundle"):
        onnxparity.capture(model, images(2, size=16), tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


# ---------------------------------------------------------------- more of the manifest

def test_nondeterministic_eager_is_recorded(tmp_path):
    doc = onnxparity.capture(models.Noisy().eval(), torch.ones(2, 4), tmp_path / "b")
    assert doc["deterministic"] is False and doc["fixtures"][0]["deterministic"] is False


def test_static_export_records_baked_shapes(tmp_path, binary):
    doc = onnxparity.capture(models.small_net(), images(2, 3, size=16), tmp_path / "b",
                             dynamic_axes=None)
    assert {"name": "x", "dim": 0, "sizes": [2, 3]} == {k: doc["shape_risks"][0][k]
                                                        for k in ("name", "dim", "sizes")}
    rc, res, _, _ = run_check(tmp_path / "b", binary=binary)
    # batch 3 through the graph traced at batch 2
    assert rc == 1 and [f["status"] for f in res["fixtures"]] == ["pass", "error"]


def test_large_model_writes_external_data(tmp_path, binary):
    doc = onnxparity.capture(models.small_net(), images(2, 3, size=16), tmp_path / "b", large_model=True)
    assert doc["model"]["external_data"] == ["model.onnx.data"]
    assert (tmp_path / "b" / "model.onnx.data").stat().st_size > 0
    assert_export_parity(tmp_path / "b", binary=binary)
    assert_intermediates_parity(tmp_path / "b", 0, binary=binary, rtol=1e-3, atol=1e-4)


def test_exporter_choice(tmp_path):
    from onnxparity import _export
    if _export.has_dynamo_exporter():
        pytest.skip("this torch has the dynamo exporter; the legacy-only refusal does not apply")
    with pytest.raises(CaptureError, match="needs torch >= 2.5"):
        onnxparity.capture(models.Branchy().eval(), torch.ones(2, 4), tmp_path / "b", exporter="dynamo")
    doc = onnxparity.capture(models.Branchy().eval(), torch.ones(2, 4), tmp_path / "b", exporter="auto")
    assert doc["exporter"] == "legacy" and doc["exporter_requested"] == "auto"


# ---------------------------------------------------------------- the torch >= 2.5 path, offline

def test_dynamo_scope_mapping_on_synthetic_metadata():
    """torch 1.13 has no dynamo exporter; the mapping of its node metadata
    (pkg.torch.onnx.name_scopes) is checked on a hand-made graph."""
    from types import SimpleNamespace as NS
    from onnxparity import _mapping

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Dropout())

        def forward(self, x):
            return self.net(x)

    def node(name, scopes, out):
        return NS(name=name, op_type="X", output=[out],
                  metadata_props=[NS(key="pkg.torch.onnx.name_scopes", value=repr(scopes))])

    graph = NS(graph=NS(node=[node("linear", ["", "net", "net.0", "linear"], "v_lin"),
                              node("relu", ["", "net", "net.1", "relu"], "v_relu")]))
    model = Wrap().eval()
    x = torch.randn(2, 4)
    style = _mapping.DynamoScopes()
    with _mapping.Recorder(model, style, dataflow=True) as rec, torch.no_grad():
        model(x)
    m = _mapping.build(rec.calls, graph, style, {id(x): "x"}, {})
    got = {c.path: m.value.get(c.index) for c in rec.calls[1:]}
    assert got == {"net": "v_relu", "net.0": "v_lin", "net.1": "v_relu", "net.2": "v_relu"}
    assert m.kind[[c.index for c in rec.calls if c.path == "net.2"][0]] == "identity"


def test_dynamic_shapes_follow_the_forward_signature(monkeypatch):
    from onnxparity import _export
    monkeypatch.setattr(_export, "_dim_factory", lambda: (lambda name: f"Dim({name})"))
    model = models.TwoInputs()
    shapes = _export.dynamic_shapes_for(model.forward, (torch.ones(2, 6),), {"scale": torch.ones(2, 2)},
                                        {0: {0: "batch"}, 1: {0: "batch"}})
    assert shapes == {"x": {0: "Dim(batch)"}, "scale": {0: "Dim(batch)"}}
