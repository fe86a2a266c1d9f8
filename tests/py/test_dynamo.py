"""The capture under torch 2.x: the dynamo exporter (torch.onnx.export's
default since torch 2.9) and the legacy one (dynamo=False) on the same torch.

Needs a torch with the dynamo exporter: `make test` runs this file with the
virtual environment's python (.venv-torch2, scripts/setup.sh venv); under
Debian's torch 1.13 every test here skips and says so.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     .venv-torch2/bin/python -m pytest -q tests/py/test_dynamo.py
"""
import json
import os
import pathlib
import shutil

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")

import consumers  # noqa: E402
import onnxparity  # noqa: E402
from onnxparity import ExportError, _export  # noqa: E402
from onnxparity.testing import assert_export_parity, assert_intermediates_parity, run_check  # noqa: E402

import test_capture_models as models  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not _export.has_dynamo_exporter(),
                       reason=f"torch {torch.__version__} has no dynamo exporter (make test runs this "
                              "file under .venv-torch2's torch 2.x)"),
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning"),
]


def images(*batches, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, 3, size, size, generator=g) for b in batches]


def manifest(bundle):
    return json.loads((pathlib.Path(bundle) / "parity.json").read_text())


def metadata(node):
    return {p.key: p.value for p in node.metadata_props}


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module")
def resnet_dynamo(tmp_path_factory):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    out = tmp_path_factory.mktemp("r18d") / "bundle"
    # traced at batch 3 ("auto"): torch.export specializes a dim of size 1
    onnxparity.capture(model, images(1, 3, size=64, seed=1), out, exporter="dynamo", trace_fixture="auto")
    return out


# ---------------------------------------------------------------- what the exporter writes

def test_node_metadata_keys_are_the_ones_the_mapping_reads(resnet_dynamo):
    """torch's dynamo exporter writes these keys on each node it translated;
    nodes its optimizer rewrote (Conv with BatchNorm folded in) carry none."""
    g = onnx.load(str(resnet_dynamo / "model.onnx")).graph
    keys = set().union(*(metadata(n).keys() for n in g.node))
    assert {"pkg.torch.onnx.name_scopes", "pkg.torch.onnx.class_hierarchy", "namespace",
            "pkg.torch.onnx.fx_node", "pkg.torch.onnx.stack_trace"} <= keys
    relu = next(n for n in g.node if n.op_type == "Relu" and "layer1.0.relu" in
                metadata(n).get("pkg.torch.onnx.name_scopes", ""))
    assert eval(metadata(relu)["pkg.torch.onnx.name_scopes"])[:4] == ["", "layer1", "layer1.0",
                                                                       "layer1.0.relu"]
    assert "torch.nn.modules.activation.ReLU" in metadata(relu)["pkg.torch.onnx.class_hierarchy"]
    assert any(n.op_type == "Conv" and not metadata(n) for n in g.node)


def test_dynamic_batch_is_symbolic_in_the_graph(resnet_dynamo):
    g = onnx.load(str(resnet_dynamo / "model.onnx")).graph
    dim0 = g.input[0].type.tensor_type.shape.dim[0]
    assert dim0.dim_param and not dim0.HasField("dim_value")
    m = manifest(resnet_dynamo)
    assert m["exporter"] == "dynamo" and m["exporter_fallback"] is None
    assert m["export_args"]["dynamic_shapes"] == {"x": {"0": "Dim.DYNAMIC"}}  # torch's hint, by name


# ---------------------------------------------------------------- the module mapping

def test_resnet18_maps_every_leaf_and_intermediates_agree(resnet_dynamo, binary):
    m = manifest(resnet_dynamo)
    s = m["mapping"]
    assert s["method"] == "dynamo-module-stack"
    assert s["leaf_modules"] == 52 and s["leaf_mapped"] / s["leaf_modules"] >= 0.9, s["unmapped"]
    # the optimizer's Conv+BatchNorm: the BatchNorm owns the fused value, the Conv is fused into it
    assert {"module": "layer2.0.downsample.0", "type": "Conv2d",
            "fused_into": "layer2.0.downsample.1"} in s["fused"]
    # two calls of one ReLU: two values (the call number comes from the exported program)
    assert m["module_map"]["layer1.0.relu"] != m["module_map"]["layer1.0.relu#1"]
    assert_export_parity(resnet_dynamo, binary=binary, top_k="auto")
    for k in range(2):
        res = assert_intermediates_parity(resnet_dynamo, k, binary=binary, rtol=1e-3, atol=1e-4)
        assert len(res) >= 40


def plant_scale(src, dst, value, k):
    """A copy of bundle ``src`` whose value ``value`` is scaled by 1.05 right
    where it is made (a Mul after its node, taking over the name)."""
    shutil.copytree(src, dst)
    m = onnx.load(str(dst / "model.onnx"))
    j, prod = next((j, n) for j, n in enumerate(m.graph.node) if value in n.output)
    prod.output[list(prod.output).index(value)] = value + "__pre"
    m.graph.initializer.append(onnx.helper.make_tensor(value + "__k", onnx.TensorProto.FLOAT, [], [1.05]))
    m.graph.node.insert(j + 1, onnx.helper.make_node("Mul", [value + "__pre", value + "__k"], [value],
                                                     name=f"planted_{k}"))
    onnx.save(m, str(dst / "model.onnx"))


def test_bisect_names_the_module_of_every_planted_value(resnet_dynamo, binary, tmp_path):
    """A defect planted at each mapped value of the dynamo-exported resnet18,
    one at a time: bisect's first divergent value names its module (and call),
    so the leaf modules it covers are found by name (a Conv fused into its
    BatchNorm through the BatchNorm)."""
    bisect_every_value(resnet_dynamo, binary, tmp_path)


def bisect_every_value(bundle, binary, tmp_path):
    index = json.loads((bundle / "test_data_set_0/intermediates/index.json").read_text())
    owner = {e["value"]: e["module"] + (f"#{e['call']}" if e["call"] else "") for e in index["entries"]}
    named = set()
    for k, v in enumerate(owner):
        d = tmp_path / f"p{k}"
        plant_scale(bundle, d, v, k)
        r = run_bisect(binary, d)
        fd = r["first_divergent"]
        assert fd and fd["output"] == v and fd["module"] == owner[v], (v, owner[v], fd)
        named.add(v)
        shutil.rmtree(d)
    m = manifest(bundle)
    leaves = {c["module"] for c in m["module_calls"] if c["leaf"]}
    found = {c["module"] for c in m["module_calls"] if c["leaf"] and c["value"] in named}
    assert len(found) / m["mapping"]["leaf_modules"] >= 0.9 and found == leaves, sorted(leaves - found)


def run_bisect(binary, bundle):
    import subprocess
    r = subprocess.run([binary, "bisect", str(bundle), "--format", "json"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    consumers.validate_doc(doc, "bisect --format json")  # its published schema
    return doc


def test_transformer_encoder_maps_every_called_leaf(tmp_path, binary):
    model = models.transformer_encoder()
    g = torch.Generator().manual_seed(3)
    fixtures = [torch.randn(1, 6, 32, generator=g), torch.randn(4, 6, 32, generator=g),
                torch.randn(2, 9, 32, generator=g)]
    doc = onnxparity.capture(model, fixtures, tmp_path / "b", dynamic_axes="auto", exporter="dynamo",
                             trace_fixture="auto")
    s = doc["mapping"]
    assert s["leaf_modules"] == 16 and s["rate"] >= 0.9, s["unmapped"]
    # MultiheadAttention applies out_proj's weights without calling it: its
    # output is derived from the attention's, and maps to the last Gemm
    calls = {c["module"]: c for c in doc["module_calls"]}
    assert calls["layers.1.self_attn.out_proj"]["kind"] == "derived"
    # eval Dropout after a functional ReLU: the parent's own value between the calls
    made_by = {o: n.op_type for n in onnx.load(str(tmp_path / "b" / "model.onnx")).graph.node
               for o in n.output}
    assert made_by[doc["module_map"]["layers.0.dropout"]] == "Relu"
    assert_export_parity(tmp_path / "b", binary=binary, rtol=1e-4, atol=1e-4)
    for k in (0, 1):
        assert_intermediates_parity(tmp_path / "b", k, binary=binary, rtol=1e-3, atol=1e-4)
    bisect_every_value(tmp_path / "b", binary, tmp_path / "planted")


def test_submodule_bundles_under_dynamo(tmp_path, binary):
    doc = onnxparity.export_submodules(models.backbone_head(), images(1, 5, size=16), tmp_path / "parts",
                                       ["backbone", "head"], exporter="dynamo")
    assert [s["exporter"] for s in doc["submodules"]] == ["dynamo", "dynamo"]
    for name in ("backbone", "head"):
        assert_export_parity(tmp_path / "parts" / name, binary=binary)
        assert manifest(tmp_path / "parts" / name)["mapping"]["rate"] >= 0.9


# ---------------------------------------------------------------- both exporters on torch 2.x

def test_legacy_exporter_on_torch2(tmp_path, binary):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    doc = onnxparity.capture(model, images(1, 3, size=64, seed=1), tmp_path / "b", exporter="legacy")
    assert doc["exporter"] == "legacy" and doc["mapping"]["method"] == "legacy-scope-names"
    assert doc["mapping"]["rate"] >= 0.9, doc["mapping"]["unmapped"]
    assert doc["module_map"]["layer1.0.relu#1"] == "/layer1/layer1.0/relu_1/Relu_output_0"
    assert_export_parity(tmp_path / "b", binary=binary, top_k="auto")
    assert_intermediates_parity(tmp_path / "b", 1, binary=binary, rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------- what torch.export refuses

def branch_line():
    src = pathlib.Path(models.__file__).read_text().splitlines()
    return next(i for i, s in enumerate(src, 1) if "BRANCH-LINE" in s)


def test_data_dependent_branch_is_an_export_error_naming_line_and_fix(tmp_path):
    with pytest.raises(ExportError) as e:
        onnxparity.capture(models.Branchy().eval(), [torch.ones(2, 4), -torch.ones(3, 4)], tmp_path / "b",
                           exporter="dynamo")
    msg = str(e.value)
    assert "data-dependent control flow" in msg and "torch.cond" in msg and "torch.where" in msg
    assert f"test_capture_models.py:{branch_line()}" in msg and "x.sum() > 0" in msg
    assert not (tmp_path / "b").exists()


@pytest.mark.exporter_fallback
def test_auto_falls_back_to_legacy_and_records_why(tmp_path):
    doc = onnxparity.capture(models.Branchy().eval(), [torch.ones(2, 4), -torch.ones(3, 4)], tmp_path / "b")
    assert doc["exporter"] == "legacy" and doc["exporter_requested"] == "auto"
    assert "data-dependent control flow" in doc["exporter_fallback"]
    assert f"test_capture_models.py:{branch_line()}" in doc["exporter_fallback"]


class BranchyHistogram(torch.nn.Module):
    """Refused by both exporters: torch.export by the branch on a value,
    the legacy one by aten::histc (no ONNX symbolic)."""

    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        return torch.histc(x, bins=4, min=-1.0, max=1.0)


@pytest.mark.exporter_fallback
def test_when_the_fallback_fails_too_both_reasons_are_given(tmp_path, capfd):
    """Under exporter "auto" the legacy exporter's refusal alone would hide
    why dynamo was left: the error says both, dynamo's first."""
    with pytest.raises(ExportError) as e:
        onnxparity.capture(BranchyHistogram().eval(), [torch.ones(2, 4)], tmp_path / "b")
    msg = str(e.value)
    assert msg.startswith("torch.onnx.export failed under both exporters: dynamo (")
    assert "data-dependent control flow" in msg and "torch.cond" in msg
    assert msg.index("data-dependent") < msg.index("then the legacy fallback") < msg.index("histc")
    assert not (tmp_path / "b").exists()


@pytest.mark.skipif(not os.environ.get("ONNXPARITY_EXPECT_EXPORTER"),
                    reason="the fallback guard is on only under ONNXPARITY_EXPECT_EXPORTER "
                           "(make test-py-torch2)")
def test_a_silent_fallback_fails_the_test(tmp_path):
    """conftest's guard: an unmarked test whose capture fell back to legacy fails."""
    with pytest.raises(pytest.fail.Exception, match="used the legacy exporter, expected dynamo"):
        onnxparity.capture(models.Branchy().eval(), [torch.ones(2, 4)], tmp_path / "b")


def test_training_batchnorm_is_refused_with_the_fix(tmp_path):
    with pytest.raises(ExportError, match=r"BatchNorm in training mode.*model\.eval\(\)"):
        onnxparity.capture(models.small_net_training(), images(2, 4, size=16), tmp_path / "b",
                           allow_training=True, exporter="dynamo")


class CondBranch(torch.nn.Module):
    """The data-dependent branch written for torch.export: torch.cond."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t * 2.0, lambda t: t - 1.0, (self.lin(x),))


def test_torch_cond_exports_to_an_if_and_both_branches_check(tmp_path, binary):
    torch.manual_seed(0)
    model = CondBranch().eval()
    pos, neg = torch.full((2, 4), 3.0), torch.full((3, 4), -3.0)
    doc = onnxparity.capture(model, [pos, neg], tmp_path / "b", exporter="dynamo")
    g = onnx.load(str(tmp_path / "b" / "model.onnx")).graph
    ops = {n.op_type for n in g.node}
    # onnxscript may put the If inside a local function; look there too
    funcs = onnx.load(str(tmp_path / "b" / "model.onnx")).functions
    ops |= {n.op_type for f in funcs for n in f.node}
    assert "If" in ops, ops
    rc, res, err, _ = run_check(tmp_path / "b", binary=binary)
    assert rc == 0 and [f["status"] for f in res["fixtures"]] == ["pass", "pass"], err
    assert doc["module_map"]["lin"]
