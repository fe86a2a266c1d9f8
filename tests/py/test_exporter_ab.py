"""Issue 32, Must-show 2: exporter A/B (onnxparity.compare_exporters) on
three models where torch's two ONNX exporters really differ; the report
names which one matches eager and where the other separates.

Each answer is held against what is established here without the tool:
every exporter's model.onnx run by onnxruntime's Python package against the
model run eagerly in float64, and the separating value exposed as a graph
output and compared with the float64 output of the module it is mapped to.

- a ResNet stem (torchvision's BasicBlock) left in training mode: the legacy
  exporter writes BatchNormalization with batch statistics
  (training_mode=1); torch 2.15's dynamo exporter writes the running
  statistics (folded into the Conv), torch 2.9's refuses the module.
- a peak-normalizing audio front end (``x / x.abs().max().item()``): the
  legacy tracer bakes the traced fixture's peak into a constant, dynamo keeps
  the ReduceMax.
- a bag-of-embeddings text classifier with ``nn.Embedding(max_norm=1.0)``:
  legacy drops the renormalization (the rows the trace renormalized are
  baked into the weight, the others are not), dynamo exports it (ScatterND).

Runs under torch 2.9 and 2.15 (make test-py-torch2, test-py-torch215); under
torch 1.13 (legacy only) the dynamo side is reported unavailable.

    .venv-torch215/bin/python -m pytest -q tests/py/test_exporter_ab.py
"""
import copy
import json

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
onnx = pytest.importorskip("onnx")
resnet = pytest.importorskip("torchvision.models.resnet")

from consumers import validate_doc  # noqa: E402
from onnxparity import _export  # noqa: E402
from onnxparity import compare_exporters  # noqa: E402  (the public name)

nn = torch.nn
DYNAMO = _export.has_dynamo_exporter()
TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
needs_dynamo = pytest.mark.skipif(not DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")


# --------------------------------------------------------------------------- the three models

class ResNetStem(nn.Module):
    """conv-bn-relu stem, one torchvision BasicBlock, pooled linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.layer1 = resnet.BasicBlock(16, 16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = self.layer1(self.relu(self.bn1(self.conv1(x))))
        return self.fc(y.mean((2, 3)))


class PeakNormAudio(nn.Module):
    """waveform / its peak, strided Conv1d front end, pooled linear head."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 9, stride=4)
        self.fc = nn.Linear(8, 5)

    def forward(self, wave):
        x = wave / wave.abs().max().item()
        return self.fc(torch.relu(self.conv(x)).mean(2))


class BagOfEmbeddings(nn.Module):
    """fastText-style: embedding rows capped at norm 1, mean, linear."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8, max_norm=1.0)
        self.fc = nn.Linear(8, 3)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


def _stem():
    torch.manual_seed(0)
    m = ResNetStem()
    with torch.no_grad():  # running statistics unlike any batch's, as after training
        for bn in (m.bn1, m.layer1.bn1, m.layer1.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    m.train()  # the bug: left in training mode
    fx = [torch.randn(4, 3, 12, 12), torch.randn(4, 3, 12, 12) * 2 + 0.5]
    return m, fx, {"allow_training": True}


def _audio():
    torch.manual_seed(1)
    fx = [torch.randn(2, 1, 400) * 0.3, torch.randn(2, 1, 400) * 3.0]
    return PeakNormAudio().eval(), fx, {}


def _bag():
    torch.manual_seed(2)
    fx = [torch.arange(0, 12).reshape(2, 6), torch.arange(20, 32).reshape(2, 6)]
    return BagOfEmbeddings().eval(), fx, {}


CASES = {"stem": _stem, "audio": _audio, "bag": _bag}


@pytest.fixture(scope="module")
def ab(tmp_path_factory):
    """Each case captured with both exporters, once for the module."""
    done = {}

    def get(name):
        if name not in done:
            model, fx, opts = CASES[name]()
            out = tmp_path_factory.mktemp(f"ab_{name}")
            done[name] = (model, fx, out, compare_exporters(model, fx, out, **opts))
        return done[name]
    return get


# --------------------------------------------------------------------------- independent truth

def _eager64(model, x, module=None):
    """The model's output (or ``module``'s) in float64, in eval mode, as the
    capture's eager truth is taken."""
    m = copy.deepcopy(model).double().eval()
    seen = {}
    if module:
        m.get_submodule(module).register_forward_hook(lambda mod, i, o: seen.setdefault("v", o))
    with torch.no_grad():
        xd = x.double() if x.is_floating_point() else x
        y = m(xd)
    return (seen["v"] if module else y).numpy()


def _ort(bundle, x, extra=()):
    """ONNX Runtime (the Python package) on bundle/model.onnx, with the values
    ``extra`` exposed as graph outputs; returns {name: array}."""
    ort = pytest.importorskip("onnxruntime")  # not in torch 1.13's (Debian's) Python
    mp = onnx.load(str(bundle / "model.onnx"))
    have = {o.name for o in mp.graph.output}
    for v in extra:
        if v not in have:
            mp.graph.output.append(onnx.ValueInfoProto(name=v))
    s = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return dict(zip(names, s.run(None, {s.get_inputs()[0].name: x.numpy()})))


def _rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


def _verify_outputs(model, fx, out, comp):
    """Which exporter's graph matches float64 eager, by onnxruntime here,
    must be the comparison's answer."""
    for r in comp.runs.values():
        if r.status != "checked":
            continue
        errs = [_rel(next(iter(_ort(out / r.exporter, x).values())), _eager64(model, x)) for x in fx]
        if r.exporter in comp.matching:
            assert max(errs) < 1e-5, (r.exporter, errs)
        else:
            assert max(errs) > 1e-2, (r.exporter, errs)


def _verify_separation(model, fx, out, sep):
    """The named value really leaves float64 eager in the separating graph
    and the same module's value in the matching graph does not."""
    x = fx[sep.fixture]
    want = _eager64(model, x, sep.module)
    mine = _ort(out / sep.exporter, x, [sep.output])[sep.output]
    assert _rel(mine, want) > 1e-2
    theirs = _ort(out / sep.matching, x, [sep.matching_value])[sep.matching_value]
    assert _rel(theirs, want) < 1e-5


def _node(bundle, name):
    g = onnx.load(str(bundle / "model.onnx"), load_external_data=False).graph
    return next(n for n in g.node if n.name == name), g


# --------------------------------------------------------------------------- the three A/Bs

@needs_dynamo
def test_training_mode_batchnorm(ab):
    model, fx, out, comp = ab("stem")
    assert comp.differ
    assert comp.separating == ["legacy"]
    leg = comp.runs["legacy"]
    assert leg.first_divergent.module == "bn1" and leg.first_divergent.op_type == "BatchNormalization"
    node, g = _node(out / "legacy", leg.first_divergent.node)
    assert onnx.helper.get_attribute_value(next(a for a in node.attribute if a.name == "training_mode")) == 1
    if TORCH >= (2, 15):
        # dynamo writes the running statistics: it matches; legacy separates at the stem's BN
        assert comp.matching == ["dynamo"] and comp.failed == [] and comp.eager_identical is True
        # against float64 too: legacy's output far from it, dynamo's as close as eager's own
        w_leg, w_dyn = comp.runs["legacy"].worst, comp.runs["dynamo"].worst
        assert w_leg["ort_vs_float64"] > 1e4 * w_leg["eager_vs_float64"]
        assert w_dyn["ort_vs_float64"] < 10 * max(w_dyn["eager_vs_float64"], 1e-7)
        sep, = comp.separations
        assert sep.node == leg.first_divergent.node and sep.matching == "dynamo"
        assert "training_mode=1" in sep.op_type and any("training_mode=1" in op for op in sep.only_here)
        # first: the Conv feeding that BN still agrees with float64 eager
        conv_out = node.input[0]
        got = _ort(out / "legacy", fx[sep.fixture], [conv_out])[conv_out]
        assert _rel(got, _eager64(model, fx[sep.fixture], "conv1")) < 1e-5
        _verify_separation(model, fx, out, sep)
        assert "dynamo matches eager; legacy separates at " + sep.node in comp.summary
    else:
        # torch 2.9's dynamo refuses the training-mode BN: a difference, no match
        assert comp.failed == ["dynamo"] and comp.matching == []
        assert comp.runs["dynamo"].status == "export-failed" and comp.runs["dynamo"].error
        assert "dynamo failed to export" in comp.summary
    _verify_outputs(model, fx, out, comp)
    doc = json.loads((out / "exporters.json").read_text())
    validate_doc(doc, "exporters.json")
    assert doc["separating"] == ["legacy"] and doc["exporters"][0]["first_divergent"]["module"] == "bn1"


@needs_dynamo
def test_item_baked_by_the_tracer(ab):
    model, fx, out, comp = ab("audio")
    assert comp.matching == ["dynamo"] and comp.separating == ["legacy"] and comp.eager_identical
    sep, = comp.separations
    # the first mapped value to leave eager: the Conv1d's output, on the fixture not traced
    assert (sep.module, sep.fixture, sep.op_type) == ("conv", 1, "Conv")
    assert sep.node == comp.runs["legacy"].first_divergent.node
    assert "traced-control-flow" in comp.runs["legacy"].causes
    # the graph difference: the peak is computed only in dynamo's graph
    assert "ReduceMax" in sep.only_matching and not any("ReduceMax" in op for op in sep.only_here)
    assert sep.max_abs > 100 * sep.envelope_max
    _verify_outputs(model, fx, out, comp)
    _verify_separation(model, fx, out, sep)


@needs_dynamo
def test_embedding_max_norm(ab):
    model, fx, out, comp = ab("bag")
    assert comp.matching == ["dynamo"] and comp.separating == ["legacy"] and comp.eager_identical
    sep, = comp.separations
    assert (sep.module, sep.fixture, sep.op_type) == ("emb", 1, "Gather")
    # dynamo renormalizes the rows in the graph; legacy has the lookup alone
    assert {"ReduceL2", "ScatterND"} <= {op.split("[")[0] for op in sep.only_matching}
    assert sep.only_here == ()
    # the numbers match although the verdict fails on the forward's in-place update
    dyn = comp.runs["dynamo"]
    assert dyn.numbers_match and dyn.first_divergent is None
    _verify_outputs(model, fx, out, comp)
    _verify_separation(model, fx, out, sep)
    md = (out / "exporters.md").read_text()
    assert "## Where legacy separates" in md and sep.node in md


# --------------------------------------------------------------------------- edges

def test_unknown_exporter_writes_nothing(tmp_path):
    model, fx, _ = _audio()
    with pytest.raises(ValueError, match="'onnx' is none of them"):
        compare_exporters(model, fx, tmp_path / "x", exporters=["legacy", "onnx"])
    assert not (tmp_path / "x").exists()


def test_refused_input_raises_and_leaves_nothing(tmp_path):
    from onnxparity import FixtureError
    model, fx, _ = _audio()
    with pytest.raises(FixtureError):
        compare_exporters(model, [fx[0], "not a tensor"], tmp_path / "y")
    assert not (tmp_path / "y").exists()


class Interrupted(BaseException):
    """What Ctrl-C is to the call: no Exception, nothing catches it."""


class InterruptedUnderDynamo(nn.Module):
    """A Linear whose forward is interrupted while torch.export traces it
    (the second exporter's capture), after the legacy bundle is written."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        if torch.compiler.is_exporting():
            raise Interrupted("stopped during the dynamo export")
        return self.fc(x)


@needs_dynamo
def test_second_capture_raising_leaves_nothing(tmp_path):
    torch.manual_seed(3)
    fx = [torch.randn(2, 6), torch.randn(2, 6)]
    # out_dir made by the call (and its parent): none of it stays
    with pytest.raises(Interrupted):
        compare_exporters(InterruptedUnderDynamo().eval(), fx, tmp_path / "new" / "ab")
    assert not (tmp_path / "new").exists()
    # out_dir there before, with a file and a folder of its own: those stay,
    # the bundle the call wrote goes
    out = tmp_path / "kept"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "a.txt").write_text("mine\n")
    (out / "readme.txt").write_text("mine\n")
    with pytest.raises(Interrupted):
        compare_exporters(InterruptedUnderDynamo().eval(), fx, out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "notes", "notes/a.txt", "readme.txt"]


def test_check_refusing_leaves_nothing(tmp_path):
    # the first bundle captured, then its check refused (an unknown option)
    model, fx, _ = _audio()
    with pytest.raises(Exception, match="no_such_option"):
        compare_exporters(model, fx, tmp_path / "z", exporters=["legacy"],
                          check_options={"no_such_option": 1})
    assert not (tmp_path / "z").exists()


@pytest.mark.skipif(DYNAMO, reason="torch has the dynamo exporter here")
def test_without_dynamo_it_is_reported_unavailable(tmp_path):
    model, fx, _ = _audio()
    comp = compare_exporters(model, fx, tmp_path)
    assert comp.runs["dynamo"].status == "unavailable" and comp.separating == ["legacy"]
    assert comp.separations[0].matching is None and comp.separations[0].module == "conv"
    doc = json.loads((tmp_path / "exporters.json").read_text())
    validate_doc(doc, "exporters.json")
    assert doc["exporters"][1] == dict(doc["exporters"][1], status="unavailable", bundle=None)


# --------------------------------------------------------------------------- the command

def audio_model():
    """The audio case's model, as a factory for python -m onnxparity.exporters."""
    return _audio()[0]


@needs_dynamo
def test_command_line(tmp_path, capsys):
    from onnxparity.exporters import main
    _, fx, _ = _audio()
    npz = tmp_path / "fx.npz"
    np.savez(npz, **{f"fixture_{k}/input_0": x.numpy() for k, x in enumerate(fx)})
    rc = main([f"{__name__}:audio_model", "--fixtures", str(npz), "--out", str(tmp_path / "ab"),
               "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["matching"] == ["dynamo"] and doc["separating"] == ["legacy"]
    assert doc["separations"][0]["module"] == "conv" and doc["separations"][0]["fixture"] == 1
    assert json.loads((tmp_path / "ab" / "exporters.json").read_text()) == doc
    # bad input: one line, exit 2, nothing written
    rc = main([f"{__name__}:audio_model", "--fixtures", str(npz), "--out", str(tmp_path / "no"),
               "--exporters", "legacy,tflite"])
    err = capsys.readouterr().err
    assert rc == 2 and "'tflite' is none of them" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "no").exists()


def not_a_model():
    """A factory that returns no torch.nn.Module (bad input for the commands)."""
    return torch.nn.functional.relu


def failing_model():
    """A factory that raises (bad input for the commands)."""
    raise RuntimeError("weights not found")


def test_factories_refused_alike_by_both_commands(tmp_path, capsys):
    """python -m onnxparity capture and python -m onnxparity.exporters load
    the model with one helper: the same one-line message, exit 2, nothing
    written."""
    from onnxparity.__main__ import main as capture_main
    from onnxparity.exporters import main as ab_main
    _, fx, _ = _audio()
    npz = tmp_path / "fx.npz"
    np.savez(npz, **{f"fixture_{k}/input_0": x.numpy() for k, x in enumerate(fx)})
    for factory, says in (("not_a_model", "returned function, not a torch.nn.Module"),
                          ("failing_model", "raised RuntimeError: weights not found"),
                          ("no_such_factory", "has no attribute 'no_such_factory'")):
        spec = f"{__name__}:{factory}"
        errs = []
        for main, argv in ((capture_main, ["capture", spec]), (ab_main, [spec])):
            out = tmp_path / f"out_{factory}_{len(errs)}"
            assert main(argv + ["--fixtures", str(npz), "--out", str(out)]) == 2
            errs.append(capsys.readouterr().err.strip().splitlines())
            assert not out.exists()
        assert errs[0] == errs[1] and len(errs[0]) == 1 and says in errs[0][0], errs
