"""capture()'s defaults come from the fixtures (issue 32): a dim whose size
varies across the fixtures is exported dynamic unless the caller says
otherwise; under dynamo the traced fixture is one whose dynamic dims are all
>= 2 (torch.export specializes a dim of size 1); what the caller does say
(dynamic_axes, trace_fixture) is reproduced exactly, so a bundle can hold a
user's own export call, broken or not.  A fallback from dynamo to legacy is
printed (ExporterFallbackWarning, on stderr).

Runs under every torch of `make test`: Debian's 1.13 (legacy), the venv's
2.9 and 2.15 (dynamo).  The BERT cases need transformers (the venvs have it).
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")

import onnxparity  # noqa: E402
from conftest import expected_exporter  # noqa: E402
from onnxparity import _export  # noqa: E402

import test_capture_models as models  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning",
                                        "ignore::DeprecationWarning", "ignore::FutureWarning")

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


def check(binary, bundle):
    """`onnxparity check --format json`: (exit code, document)."""
    r = subprocess.run([binary, "check", str(bundle), "--format", "json"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r.returncode, json.loads(r.stdout)


def statuses(doc):
    return [f["status"] for f in doc["fixtures"]]


def graph_input_dims(bundle, k=0):
    """The dims of the exported graph's input k: an int where the graph fixes
    the size, the symbol's name where it is dynamic."""
    mp = onnx.load(str(pathlib.Path(bundle) / "model.onnx"), load_external_data=False)
    inits = {i.name for i in mp.graph.initializer}
    inp = [i for i in mp.graph.input if i.name not in inits][k]
    return [d.dim_param if d.HasField("dim_param") else d.dim_value
            for d in inp.type.tensor_type.shape.dim]


def seeded(seed):
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------- the README's example

def test_readme_example_resnet18_batch1_and_batch8_passes_with_defaults(tmp_path, binary):
    """README: onnxparity.capture(model, [x_batch1, x_batch8], "bundle/").
    Under dynamo the default traces batch 8 (a batch of 1 would be
    specialized by torch.export and batch 8 refused by ONNX Runtime); under
    legacy the first fixture, as a plain export traces; both pass."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    g = seeded(1)
    x_batch1, x_batch8 = torch.randn(1, 3, 64, 64, generator=g), torch.randn(8, 3, 64, 64, generator=g)
    doc = onnxparity.capture(model, [x_batch1, x_batch8], tmp_path / "bundle")
    args = doc["export_args"]
    assert doc["exporter"] == expected_exporter() and doc["exporter_fallback"] is None
    assert args["trace_fixture"] is None and args["dynamic_axes_mode"] == "auto"
    if doc["exporter"] == "dynamo":
        assert args["traced_fixture"] == 1 and "torch.export specializes" in args["traced_fixture_rule"]
        assert not any("specializes a dim of size 1" in w["message"] for w in doc["warnings"])
    else:
        assert args["traced_fixture"] == 0 and "first fixture" in args["traced_fixture_rule"]
    assert args["dynamic"]["x"] == {"0": "batch"}
    assert isinstance(graph_input_dims(tmp_path / "bundle")[0], str)  # the batch is a symbol
    assert doc["versions"]["onnx"] == onnx.__version__
    if doc["exporter"] == "dynamo":  # what the export holds depends on onnxscript's version too
        onnxscript = pytest.importorskip("onnxscript")
        assert doc["versions"]["onnxscript"] == onnxscript.__version__
    rc, chk = check(binary, tmp_path / "bundle")
    assert rc == 0 and chk["verdict"] == "pass" and statuses(chk) == ["pass", "pass"], chk["summary"]


@pytest.mark.skipif(not _export.has_dynamo_exporter(), reason=f"torch {torch.__version__}: legacy only")
def test_an_explicit_trace_fixture_is_reproduced_even_where_it_breaks(tmp_path, binary):
    """trace_fixture=0 given: the batch-1 fixture is traced as asked, and
    the check's verdicts are those of a plain torch.onnx.export(model,
    (x_batch1,), dynamo=True, dynamic_shapes={"x": {0: Dim.DYNAMIC}}) run by
    ONNX Runtime.  torch 2.9 specializes the size-1 batch in resnet18's
    flatten (a Reshape to the constant [1, 512]): ONNX Runtime refuses batch
    8 and the check names the baked shape at that Reshape; torch 2.15 keeps
    it symbolic ([-1, 512]) and both pass."""
    from test_capture_accepts import batch_dims, plain_verdicts
    g = seeded(1)
    xs = [torch.randn(1, 3, 32, 32, generator=g), torch.randn(8, 3, 32, 32, generator=g)]

    def resnet():
        torch.manual_seed(0)
        return torchvision.models.resnet18(num_classes=10).eval()

    doc = onnxparity.capture(resnet(), [x.clone() for x in xs], tmp_path / "b", trace_fixture=0,
                             reference64=False, intermediates=0)
    assert doc["exporter"] == "dynamo"
    assert doc["export_args"]["trace_fixture"] == 0 and doc["export_args"]["traced_fixture"] == 0
    assert "asked for" in doc["export_args"]["traced_fixture_rule"]
    assert any("specializes a dim of size 1" in w["message"] for w in doc["warnings"])
    expected = plain_verdicts(resnet(), [(x,) for x in xs], tmp_path / "plain.onnx", binary, "dynamo",
                              **batch_dims("x")("dynamo"))
    rc, chk = check(binary, tmp_path / "b")
    assert statuses(chk) == expected, (statuses(chk), expected)
    if expected != ["pass", "pass"]:
        assert rc == 1 and expected == ["pass", "error"]
        cause = chk["causes"][0]
        assert cause["id"] == "baked-shape" and cause["confidence"] == "high", chk["causes"]
        mp = onnx.load(str(tmp_path / "b" / "model.onnx"), load_external_data=False)
        assert next(n for n in mp.graph.node if n.name == cause["node"]).op_type == "Reshape"


# ---------------------------------------------------------------- dims that vary

class LastDim(torch.nn.Module):
    """Any length in dim 1: a Linear over the last dim, a mean over dim 1."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.lin = torch.nn.Linear(4, 6)

    def forward(self, x):
        return self.lin(x).relu().mean(1)


def lengths(*shapes, seed=4):
    g = seeded(seed)
    return [torch.randn(*s, generator=g) for s in shapes]


def test_a_dim_that_varies_is_dynamic_by_default(tmp_path, binary):
    doc = onnxparity.capture(LastDim().eval(), lengths((2, 3, 4), (2, 7, 4)), tmp_path / "b",
                             reference64=False, intermediates=0)
    assert doc["export_args"]["dynamic"]["x"] == {"0": "batch", "1": "x_dim1"}
    assert doc["shape_risks"] == []
    dims = graph_input_dims(tmp_path / "b")
    assert isinstance(dims[0], str) and isinstance(dims[1], str) and dims[2] == 4
    rc, chk = check(binary, tmp_path / "b")
    assert rc == 0 and statuses(chk) == ["pass", "pass"]


@pytest.mark.parametrize("axes", ["batch", {"x": {0: "n"}}, {"x": [0]}])
def test_explicit_dynamic_axes_are_reproduced_exactly(tmp_path, binary, axes):
    """The caller's axes leave dim 1 static: the graph holds the traced
    length (3), the capture records the risk, and the check fails the other
    length as a baked shape, as a plain export with those axes does."""
    doc = onnxparity.capture(LastDim().eval(), lengths((2, 3, 4), (2, 7, 4)), tmp_path / "b",
                             dynamic_axes=axes, reference64=False, intermediates=0)
    assert set(doc["export_args"]["dynamic"]["x"]) == {"0"}
    assert doc["export_args"]["dynamic_axes_mode"] == (axes if isinstance(axes, str) else "dict")
    assert [(r["name"], r["dim"], r["sizes"]) for r in doc["shape_risks"]] == [("x", 1, [3, 7])]
    assert graph_input_dims(tmp_path / "b")[1] == 3
    rc, chk = check(binary, tmp_path / "b")
    assert rc == 1 and statuses(chk) == ["pass", "error"]  # ONNX Runtime refuses length 7
    assert chk["causes"][0]["id"] == "baked-shape", chk["causes"]


def test_the_stream_and_the_options_object_share_the_defaults():
    from onnxparity import _stream
    d = onnxparity.CaptureOptions()
    assert d.dynamic_axes == "auto" and d.trace_fixture is None
    assert {k: getattr(d, k) for k in _stream._OPTIONS} == _stream._OPTIONS


# ---------------------------------------------------------------- BERT at two lengths

def tiny_bert(heads=4):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, max_position_embeddings=64, hidden_size=32,
                                  num_hidden_layers=2, num_attention_heads=heads, intermediate_size=64)
    return transformers.BertModel(cfg).eval()


def text(batch, *lengths_, seed=5):
    """One fixture per length: token ids and an attention mask whose first
    row is padded from the middle on."""
    g, out = seeded(seed), []
    for s in lengths_:
        mask = torch.ones(batch, s, dtype=torch.int64)
        mask[0, s // 2:] = 0
        out.append({"input_ids": torch.randint(0, 100, (batch, s), generator=g), "attention_mask": mask})
    return out


def test_bert_at_two_lengths_passes_with_defaults(tmp_path, binary):
    """A BERT captured at sequence lengths 8 and 12 (batch 4, as many as its
    attention heads): both lengths exported dynamic, the check passes, and
    lint raises no batch-constant finding on the heads' reshape (4 there is
    the head count, not the batch)."""
    model = tiny_bert(heads=4)
    doc = onnxparity.capture(model, text(4, 8, 12), tmp_path / "b")
    assert doc["exporter"] == expected_exporter() and doc["exporter_fallback"] is None
    dyn = doc["export_args"]["dynamic"]
    assert set(dyn["input_ids"]) == {"0", "1"} and set(dyn["attention_mask"]) == {"0", "1"}
    assert doc["shape_risks"] == []
    rc, chk = check(binary, tmp_path / "b")
    assert rc == 0 and chk["verdict"] == "pass" and statuses(chk) == ["pass", "pass"], chk["summary"]
    findings = chk["lint"]["findings"]
    assert not [f for f in findings if f["name"] == "batch-constant"], findings


def test_bert_with_only_the_batch_dynamic_is_reproduced_and_fails_the_other_length(tmp_path, binary):
    model = tiny_bert(heads=4)
    doc = onnxparity.capture(model, text(4, 8, 12), tmp_path / "b", dynamic_axes="batch",
                             reference64=False, intermediates=0)
    assert [(r["name"], r["dim"]) for r in doc["shape_risks"] if r["name"] == "input_ids"] == \
        [("input_ids", 1)]
    assert graph_input_dims(tmp_path / "b")[1] == 8
    rc, chk = check(binary, tmp_path / "b")
    assert rc == 1 and statuses(chk) == ["pass", "error"]  # ONNX Runtime refuses length 12
    assert chk["causes"][0]["id"] == "baked-shape", chk["causes"]
    # the heads' reshape ([-1, 8, 4, 8] under torch 2.15) keeps the batch in dim 0: 4 is the heads
    assert not [f for f in chk["lint"]["findings"] if f["name"] == "batch-constant"], chk["lint"]


# ---------------------------------------------------------------- a fallback is said

needs_dynamo = pytest.mark.skipif(not _export.has_dynamo_exporter(),
                                  reason=f"torch {torch.__version__} has no dynamo exporter to fall back from")


@needs_dynamo
@pytest.mark.exporter_fallback
def test_a_fallback_to_legacy_is_a_warning(tmp_path):
    with pytest.warns(_export.ExporterFallbackWarning, match="data-dependent control flow") as w:
        doc = onnxparity.capture(models.Branchy().eval(), [torch.ones(2, 4), -torch.ones(3, 4)],
                                 tmp_path / "b", reference64=False)
    said = [str(x.message) for x in w if issubclass(x.category, _export.ExporterFallbackWarning)]
    assert doc["exporter"] == "legacy" and len(said) == 1 and doc["exporter_fallback"] in said[0]


@needs_dynamo
@pytest.mark.exporter_fallback
def test_check_names_the_exporter_and_the_fallback(tmp_path, binary):
    """check's report says which exporter made the graph it judges, and
    why the capture left dynamo: the JSON's export member and the text's
    export line (Branchy: dynamo refuses its branch, legacy traces one)."""
    onnxparity.capture(models.Branchy().eval(), [torch.ones(2, 4), torch.ones(3, 4)], tmp_path / "b",
                       reference64=False)
    onnxparity.capture(LastDim().eval(), lengths((2, 3, 4)), tmp_path / "c", reference64=False)
    fallback = json.loads((tmp_path / "b" / "parity.json").read_text())["exporter_fallback"]
    assert fallback.startswith("dynamo export failed (") and "data-dependent control flow" in fallback
    _, chk = check(binary, tmp_path / "b")
    assert chk["export"] == {"exporter": "legacy", "exporter_requested": "auto", "fallback": fallback}
    _, chk = check(binary, tmp_path / "c")
    assert chk["export"] == {"exporter": "dynamo", "exporter_requested": "auto", "fallback": None}
    text = subprocess.run([binary, "check", str(tmp_path / "b")], capture_output=True, text=True).stdout
    line = next(ln for ln in text.splitlines() if ln.startswith("export "))
    assert line == f"export   legacy exporter (fallback under exporter=auto: {fallback})", line
    text = subprocess.run([binary, "check", str(tmp_path / "c")], capture_output=True, text=True).stdout
    assert "export   dynamo exporter" in text.splitlines()


@needs_dynamo
@pytest.mark.exporter_fallback
def test_a_torchscript_module_under_auto_is_a_warning(tmp_path):
    scripted = torch.jit.script(LastDim().eval())
    with pytest.warns(_export.ExporterFallbackWarning, match="TorchScript"):
        doc = onnxparity.capture(scripted, lengths((2, 3, 4)), tmp_path / "b", reference64=False)
    assert doc["exporter"] == "legacy"


def test_no_fallback_no_warning(tmp_path, recwarn):
    onnxparity.capture(LastDim().eval(), lengths((2, 3, 4)), tmp_path / "b", reference64=False)
    assert not [w for w in recwarn if issubclass(w.category, _export.ExporterFallbackWarning)]


@needs_dynamo
@pytest.mark.exporter_fallback
def test_the_cli_prints_the_fallback_on_stderr(tmp_path):
    np = pytest.importorskip("numpy")
    npz = tmp_path / "fx.npz"
    np.savez(npz, **{"fixture_0/input_0": np.ones((2, 4), np.float32),
                     "fixture_1/input_0": -np.ones((3, 4), np.float32)})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(HERE)]))
    env.pop("PYTHONWARNINGS", None)
    p = subprocess.run([sys.executable, "-m", "onnxparity", "capture", "test_capture_models:branchy",
                        "--fixtures", npz, "--out", tmp_path / "b", "--reference64", "off"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "ExporterFallbackWarning" in ln]
    assert lines and "exported with the legacy exporter, not dynamo: dynamo export failed" in lines[0], \
        p.stderr[-2000:]


# ---------------------------------------------------------------- training mode, as each exporter writes it

class ConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(self.bn(self.conv(x)).mean((2, 3)))


def batchnorm_training_nodes(bundle):
    mp = onnx.load(str(pathlib.Path(bundle) / "model.onnx"), load_external_data=False)
    return [n.name for n in mp.graph.node if n.op_type == "BatchNormalization"
            and any(a.name == "training_mode" and a.i == 1 for a in n.attribute)]


@pytest.mark.exporter_fallback  # torch 2.9's dynamo fails on it: the legacy fallback records it
def test_a_training_mode_batchnorm_is_judged_as_the_exporter_wrote_it(tmp_path, binary):
    """A BatchNorm left in training mode (allow_training): the legacy
    exporter keeps training_mode=1 (batch statistics), torch 2.15's dynamo
    writes the running statistics.  The check follows the graph: batch
    statistics fail (ONP104 and ONP106, errors), the inference form passes
    on its agreeing numbers (ONP108, a warning, no error)."""
    model = models._randomize_bn(ConvBN()).train()
    g = seeded(7)
    xs = [torch.randn(2, 3, 8, 8, generator=g), torch.randn(3, 3, 8, 8, generator=g)]
    doc = onnxparity.capture(model, xs, tmp_path / "b", allow_training=True, reference64=False,
                             intermediates=0)
    rc, chk = check(binary, tmp_path / "b")
    ids = {f["id"] for f in chk["lint"]["findings"]}
    if batchnorm_training_nodes(tmp_path / "b"):
        assert rc == 1 and chk["causes"][0]["id"] == "training-mode", chk["causes"]
        assert {"ONP104", "ONP106"} <= ids and "ONP108" not in ids, ids
    else:
        assert doc["exporter"] == "dynamo", doc["exporter_fallback"]
        assert rc == 0 and chk["verdict"] == "pass", chk["causes"]
        assert "ONP108" in ids and not ids & {"ONP104", "ONP106"}, ids
