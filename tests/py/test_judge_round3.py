"""The judge, round 3 (issue 35): what trials on real architectures got
wrong, each on a model built to the real one's shape, with the answer
established outside the judge (the float64 run read back with numpy, ONNX
Runtime's own outputs from `onnxparity run`, a fault planted in the graph).

1. A detector's boxes (SSDlite's shape: per-anchor scores, a top-k on
   near-tied scores, boxes gathered by index) are ill-conditioned: float32
   eager itself picks other boxes than float64.  That float64 noise, recorded
   by the capture, is the value's noise; a one-ulp ORT-side estimate (noise
   about 0) must not replace it.  A fault planted in the score head still
   fails, on the scores.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_judge_round3.py
"""
import json
import pathlib
import shutil
import sys

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import numpy_helper  # noqa: E402

import onnxparity as onp  # noqa: E402
from conftest import plant_weight, run  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "zoo"))
from models3 import (DeadFeatureDetector, GatedMLP, Mixer, OneImageDetector,  # noqa: E402
                     SaturatedDetector, ScaleWhenPositive, SortedActivations, TinyConvNeXt,
                     TinySSD, TinyVAE, TokenTagger)

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning",
                                        "ignore::DeprecationWarning", "ignore::FutureWarning")


def check_json(onnxparity_bin, bundle, *args):
    r = run([onnxparity_bin, "check", bundle, "--format", "json", *args])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r.returncode, json.loads(r.stdout)


def outputs_named(doc, name):
    return [o for f in doc["fixtures"] for o in f["outputs"] if o["name"] == name]


def pb(path):
    return numpy_helper.to_array(onnx.load_tensor(str(path))).astype(np.float64)


def capture_detector(net_class, seed, bundle):
    """Capture a fresh `net_class` (made under torch seed 0) on one 96x96
    image drawn from `seed`, its outputs named boxes, scores and labels."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(seed)
    onp.capture(net_class().eval(), [torch.rand(1, 3, 96, 96, generator=g)], bundle,
                output_names=["boxes", "scores", "labels"])


# --- 1. detection boxes: the float64 noise beats the one-ulp estimate ----------


@pytest.fixture(scope="module")
def detector(tmp_path_factory):
    torch.manual_seed(0)
    m = TinySSD().eval()
    g = torch.Generator().manual_seed(1)
    fx = [torch.rand(2, 3, 96, 96, generator=g) for _ in range(3)]
    out = tmp_path_factory.mktemp("det") / "b"
    onp.capture(m, fx, out, output_names=["boxes", "scores"])
    return out


def test_detector_boxes_judged_on_their_float64_noise(onnxparity, detector, tmp_path):
    b = detector
    doc = json.loads((b / "parity.json").read_text())
    assert doc["determinism"]["verdict"] == "deterministic"
    covered = [f["fixture"] for f in doc["noise"]["fixtures"]]
    assert covered, "the capture ran no float64 pass"
    for k in covered:
        d = b / f"test_data_set_{k}"
        e32, e64 = pb(d / "output_0.pb"), pb(d / "reference64/output_0.pb")
        # established by float64: eager float32 picked other boxes (not rounding)
        assert np.abs(e32 - e64).max() > 0.1 * np.abs(e64).max()
        # ONNX Runtime's own run, outside the judge: no farther from float64
        # than float32 eager is (the healthy export's signature)
        save = tmp_path / f"ort{k}"
        r = run([onnxparity, "run", b / "model.onnx", d / "input_0.pb", "--save", save,
                 "--save-format", "pb"])
        assert r.returncode == 0, r.stdout + r.stderr
        ort = pb(save / "output_0.pb")
        assert np.abs(ort - e32).max() > 1.0, "ORT picked the same boxes: the case is not exercised"
        assert np.abs(ort - e64).max() <= 4 * np.abs(e32 - e64).max()
    rc, chk = check_json(onnxparity, b)
    assert rc == 0 and chk["verdict"] == "pass", [c["id"] for c in chk["causes"]]
    boxes = outputs_named(chk, "boxes")
    assert all(o["pass"] for o in boxes)
    judged = [o for o in boxes if o["judgment"]["verdict"] != "within-tolerance"]
    assert judged, "no box output beyond the tolerance: nothing was judged on noise"
    for o in judged:
        assert o["judgment"]["verdict"] == "within-noise"
        assert o["judgment"]["noise_source"] in ("float64", "float64-scaled")
        assert "ill-conditioned" in o["note"]
    assert chk["causes"][0]["id"] == "float-noise"


def test_detector_fault_in_score_head_still_fails(onnxparity, detector, tmp_path):
    """The wide envelope of the boxes hides nothing the scores show: a fault
    planted in the class head's Conv (its weight moved by 1e-3 on the
    channels of one class) fails the scores beyond their (rounding-sized)
    float64 noise, and check names that Conv."""
    b = tmp_path / "planted"
    import shutil
    shutil.copytree(detector, b)
    m = onnx.load(str(b / "model.onnx"))
    shapes = {i.name: tuple(i.dims) for i in m.graph.initializer}
    head = [n for n in m.graph.node if n.op_type == "Conv" and shapes.get(n.input[1]) == (30, 32, 3, 3)]
    assert len(head) == 1, [n.name for n in m.graph.node if n.op_type == "Conv"]
    for i in m.graph.initializer:
        if i.name == head[0].input[1]:
            a = numpy_helper.to_array(i).copy()
            a[1::5] += 1e-3
            i.CopyFrom(numpy_helper.from_array(a, i.name))
    onnx.save(m, str(b / "model.onnx"))
    rc, chk = check_json(onnxparity, b)
    assert rc == 1 and chk["verdict"] == "fail"
    scores = outputs_named(chk, "scores")
    assert any(o["judgment"]["verdict"] == "beyond-noise" for o in scores)
    assert chk["first_divergent"] and chk["first_divergent"]["node"] == head[0].name


# --- 3. a module that returns its input, inside a residual ---------------------


def _mixer_models():
    yield "mixer-shaped", Mixer
    try:
        import timm
    except ImportError:
        return
    yield "timm-mlp-mixer", lambda: timm.models.mlp_mixer.MlpMixer(
        num_classes=10, img_size=32, patch_size=8, num_blocks=2, embed_dim=32, drop_path_rate=0.1)


@pytest.mark.parametrize("name", [n for n, _ in _mixer_models()])
def test_passthrough_inside_a_residual_maps_to_its_own_value(onnxparity, tmp_path, name):
    """drop_path returns f(x).transpose(1, 2) unchanged inside
    ``x + drop_path(...)``: its value is the Transpose's output, not the
    residual Add's (the Add holds x plus it: eagerly several units apart),
    and bisect on the healthy export agrees (exit 0)."""
    make = dict(_mixer_models())[name]
    torch.manual_seed(0)
    model = make().eval()
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 3, 32, 32, generator=g) for _ in range(2)]
    seen = {}
    blk = model.blocks[0]
    hooks = [blk.drop_path.register_forward_hook(lambda m, i, o: seen.setdefault("drop", o.detach().clone())),
             blk.register_forward_hook(lambda m, i, o: seen.setdefault("block_in", i[0].detach().clone()))]
    with torch.no_grad():
        model(fx[0])
    for h in hooks:
        h.remove()
    # the residual sum's first term is the block's input: taking the sum for
    # the branch would be this far off
    assert (seen["block_in"]).abs().max() > 0.5
    b = tmp_path / "b"
    onp.capture(model, fx, b)
    index = json.loads((b / "test_data_set_0" / "intermediates" / "index.json").read_text())
    made_by = {o: n for n in onnx.load(str(b / "model.onnx")).graph.node for o in n.output}
    entry = [e for e in index["entries"] if e["module"] == "blocks.0.drop_path"]
    assert len(entry) == 1, sorted(e["module"] for e in index["entries"])
    assert made_by[entry[0]["value"]].op_type == "Transpose", made_by[entry[0]["value"]]
    stored = pb(b / "test_data_set_0" / "intermediates" / entry[0]["file"])
    assert np.array_equal(stored, seen["drop"].numpy().astype(np.float64))
    r = run([onnxparity, "bisect", b, "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["verdict"] == "agrees", r.stdout[-2000:]


# --- 4. bisect and a fixture the graph does not take ---------------------------


def test_bisect_sets_aside_a_fixture_of_a_baked_sequence_length(onnxparity, tmp_path):
    """Only the batch declared dynamic: the export bakes the sequence length
    the trace saw (8), and the fixture of length 12 is refused before ONNX
    Runtime runs it ("expected [s23, 8], given [2, 12]").  check fails it
    as an error with baked-shape; bisect bisects the others and says why it
    cannot conclude (exit 1, fixtures_refused), not exit 2."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.randint(0, 50, s, generator=g) for s in ((2, 8), (2, 12), (3, 8))]
    b = tmp_path / "b"
    onp.capture(TokenTagger().eval(), fx, b, input_names=["ids"], dynamic_axes={"ids": {0: "batch"}})
    dims = onnx.load(str(b / "model.onnx")).graph.input[0].type.tensor_type.shape.dim
    assert dims[1].dim_value == 8  # the graph's own declaration: length 8 only
    rc, chk = check_json(onnxparity, b)
    assert rc == 1 and [f["status"] for f in chk["fixtures"]] == ["pass", "error", "pass"]
    assert chk["causes"][0]["id"] == "baked-shape"
    r = run([onnxparity, "bisect", b, "--format", "json"])
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "inconclusive"
    assert doc["fixtures"] == [0, 2] and doc["fixtures_refused"] == [1]
    assert "[2, 12]" in doc["refused_message"]
    text = run([onnxparity, "bisect", b]).stdout
    assert "refused 1 fixture(s) (1)" in text and "names why" in text


# --- 2. which outputs --top-k auto takes for logits ---------------------------


def _roles(bundle):
    return {r["name"]: r for r in json.loads((bundle / "parity.json").read_text())["adequacy"]["output_roles"]}


@pytest.mark.parametrize("names", [["boxes", "scores", "labels"], None])
def test_box_coordinates_are_not_taken_for_logits(onnxparity, tmp_path, names):
    """Boxes [30, 4] (floating, [N, C]) are a selection of the decoded
    anchors, not 4 class scores: --top-k auto leaves them alone (no flipped
    'labels' among coordinates), the adequacy report has no decision
    boundary for them; the graph decides without the name too (unnamed
    outputs); --top-k 1 still asks for it."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.rand(1, 3, 96, 96, generator=g) for _ in range(3)]
    b = tmp_path / "b"
    onp.capture(OneImageDetector().eval(), fx, b, output_names=names)
    m = onnx.load(str(b / "model.onnx"))
    boxes_name = m.graph.output[0].name
    made_by = {o: n for n in m.graph.node for o in n.output}
    assert made_by[boxes_name].op_type in ("Gather", "GatherElements", "GatherND", "Slice", "Concat", "Identity",
                                           "Reshape")
    roles = _roles(b)
    assert roles[boxes_name]["logits"] is False, roles[boxes_name]
    doc = json.loads((b / "parity.json").read_text())
    assert boxes_name not in [o["name"] for o in doc["adequacy"]["classifier_outputs"]]
    rc, chk = check_json(onnxparity, b)
    assert rc == 0, chk["causes"]
    assert not any("topk" in o for o in outputs_named(chk, boxes_name))
    rc, chk = check_json(onnxparity, b, "--top-k", "1")
    assert all("topk" in o for o in outputs_named(chk, boxes_name))


def test_classifier_logits_keep_their_top1(onnxparity, tmp_path):
    """A classifier's head (a linear layer) is logits: top-1 compared, the
    adequacy report's classes and boundaries there."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 3, 32, 32, generator=g) for _ in range(2)]
    b = tmp_path / "b"
    onp.capture(Mixer().eval(), fx, b)
    name = onnx.load(str(b / "model.onnx")).graph.output[0].name
    assert _roles(b)[name]["logits"] is True
    doc = json.loads((b / "parity.json").read_text())
    assert [o["name"] for o in doc["adequacy"]["classifier_outputs"]] == [name]
    rc, chk = check_json(onnxparity, b)
    assert rc == 0 and all(o["topk"]["rows"] == 2 for o in outputs_named(chk, name))


def test_name_rule_without_a_capture(onnxparity, tmp_path):
    """A plain ONNX test-data folder (no parity.json): the name alone says
    'boxes' is not logits; 'logits' is."""
    import shutil
    b = tmp_path / "b"
    capture_detector(OneImageDetector, 1, b)
    plain = tmp_path / "plain"
    shutil.copytree(b, plain, ignore=shutil.ignore_patterns("parity.json", "intermediates", "reference64"))
    rc, chk = check_json(onnxparity, plain)
    assert not any("topk" in o for o in outputs_named(chk, "boxes"))


def test_name_words_agree_between_capture_and_check():
    """The C list (src/judge/fixture.c) and the Python one (_roles.py) are one rule."""
    import re
    from onnxparity import _roles
    src = (pathlib.Path(__file__).resolve().parents[2] / "src" / "judge" / "fixture.c").read_text()
    block = src[src.index("not_logits_words[] = {"):]
    block = block[:block.index("};")]
    assert set(re.findall(r'"([a-z0-9]+)"', block)) == set(_roles.NOT_WORDS)


# --- 5. check reads the capture's determinism evidence -------------------------


def test_random_op_in_forward_is_nondeterminism_in_check(onnxparity, tmp_path):
    """ORT's own two runs differ (the graph draws random values) and the
    capture's rerun saw eager differ: check, without probes, says
    nondeterminism (high) at the random node, as diagnose does; not an
    optimizer (its bisect against ORT at disable compared random runs) and
    no 'unknown' beside it."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(4, 32, generator=g) for _ in range(2)]
    b = tmp_path / "b"
    onp.capture(TinyVAE().eval(), fx, b)
    m = onnx.load(str(b / "model.onnx"))
    rnd = [n.name for n in m.graph.node if n.op_type.startswith("Random")]
    assert len(rnd) == 1
    outs = []
    for k in range(2):
        r = run([onnxparity, "run", b / "model.onnx", b / "test_data_set_0" / "input_0.pb", "--save",
                 tmp_path / f"r{k}", "--save-format", "pb"])
        assert r.returncode == 0, r.stderr
        outs.append(pb(tmp_path / f"r{k}" / "output_0.pb"))
    assert np.abs(outs[0] - outs[1]).max() > 1e-3  # ORT's own runs differ
    rc, chk = check_json(onnxparity, b)
    ids = [(c["id"], c["confidence"]) for c in chk["causes"]]
    assert rc == 1 and ids[0] == ("nondeterminism", "high"), ids
    assert chk["causes"][0]["node"] == rnd[0]
    assert not any(i in ("graph-optimization", "unknown") for i, _ in ids), ids


# --- 5. a divergence the outputs absorb ----------------------------------------


def test_divergence_absorbed_by_layer_scale(onnxparity, tmp_path):
    """A LayerNorm epsilon planted 1e5 times too large inside the block: its
    output moves far beyond its noise, but layer scale (1e-6) keeps the
    change below the outputs' noise.  check passes; bisect names the
    LayerNormalization (exit 1) and says, in one sentence, that the outputs
    absorb it."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 3, 32, 32, generator=g) for _ in range(2)]
    b = tmp_path / "b"
    onp.capture(TinyConvNeXt().eval(), fx, b, opset=17)
    m = onnx.load(str(b / "model.onnx"))
    healthy = onnx.load(str(b / "model.onnx"))
    ln = [n for n in m.graph.node if n.op_type == "LayerNormalization"]
    assert len(ln) == 1, [n.op_type for n in m.graph.node]
    for a in ln[0].attribute:
        if a.name == "epsilon":
            a.f = 0.1
    if not any(a.name == "epsilon" for a in ln[0].attribute):
        ln[0].attribute.append(onnx.helper.make_attribute("epsilon", 0.1))
    onnx.save(m, str(b / "model.onnx"))
    rc, chk = check_json(onnxparity, b)
    assert rc == 0 and chk["verdict"] == "pass" and chk["absorbed"] is None
    r = run([onnxparity, "bisect", b, "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["first_divergent"]["node"] == ln[0].name, r.stdout[-1500:]
    assert doc["absorbed"] == "internal divergence absorbed: outputs within noise"
    text = run([onnxparity, "bisect", b]).stdout
    assert "internal divergence absorbed: outputs within noise" in text
    # check --intermediates says the same sentence with the same node, and
    # still passes: the causes explain no failure with it
    rc, chk = check_json(onnxparity, b, "--intermediates")
    assert rc == 0 and chk["verdict"] == "pass", [c["id"] for c in chk["causes"]]
    assert chk["absorbed"] == doc["absorbed"] and chk["first_divergent"]["node"] == ln[0].name
    assert not [c for c in chk["causes"] if c["id"] not in ("float-noise",)], chk["causes"]
    text = run([onnxparity, "check", b, "--intermediates"]).stdout
    assert f"absorbed: internal divergence absorbed: outputs within noise: {ln[0].name}" in text, text
    # a healthy twin (the epsilon as exported): --intermediates finds nothing
    onnx.save(healthy, str(b / "model.onnx"))
    rc, chk = check_json(onnxparity, b, "--intermediates")
    assert rc == 0 and chk["absorbed"] is None and chk["first_divergent"] is None


# --- 5. an operator whose torch and ONNX definitions differ, by the numbers ----

class VGGBlock(torch.nn.Module):
    """VGG's stage: conv, ReLU, 2x2 max pooling, then a 1x1 classifier conv."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.head(self.pool(torch.relu(self.conv(x))))


def test_nan_dropped_by_maxpool_is_op_semantics(onnxparity, tmp_path):
    """A NaN pixel in the input: torch's max pooling propagates it, ONNX
    Runtime's MaxPool drops it (its own run, read back: no NaN where eager
    has one).  No lint rule lists MaxPool; the numbers do: bisect's node run
    on eager inputs still fails with NaN on one side only.  check names
    op-semantics at the MaxPool (unknown, low, before)."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 3, 16, 16, generator=g) for _ in range(2)]
    for f in fx:
        f[0, :, 5, 5] = float("nan")
    b = tmp_path / "b"
    onp.capture(VGGBlock().eval(), fx, b)
    d = b / "test_data_set_0"
    r = run([onnxparity, "run", b / "model.onnx", d / "input_0.pb", "--save", tmp_path / "o",
             "--save-format", "pb"])
    assert r.returncode == 0, r.stderr
    eager, ort = pb(d / "output_0.pb"), pb(tmp_path / "o" / "output_0.pb")
    assert np.isnan(eager).sum() > np.isnan(ort).sum()  # ORT's own run drops the NaN
    pool = [n.name for n in onnx.load(str(b / "model.onnx")).graph.node if n.op_type == "MaxPool"]
    rc, chk = check_json(onnxparity, b)
    top = chk["causes"][0]
    assert rc == 1 and top["id"] == "op-semantics" and top["confidence"] in ("high", "medium"), top
    assert top["node"] == pool[0] and "NaN" in " ".join(top["evidence"])
    assert "unknown" not in [c["id"] for c in chk["causes"]]


# --- 5. a branch on a size that torch.export specialised -----------------------

class StridedPool(torch.nn.Module):
    """A sequence pooler that subsamples long inputs (`if x.shape[1] > 8`),
    as audio and token models do before a classifier."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        if x.shape[1] > 8:
            x = x[:, ::2]
        return self.fc(x.mean(1))


def test_size_branch_is_traced_control_flow(onnxparity, tmp_path):
    """The sequence dim declared dynamic, the export traced at length 6: the
    graph takes length 12 but holds the short path (eager subsamples, ONNX
    does not).  Not baked-shape, whose fix ("declare the dims dynamic") was
    done: traced-control-flow, with torch.cond or tensor ops as the fix, in
    check and diagnose alike."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 6, 16, generator=g), torch.randn(2, 12, 16, generator=g),
          torch.randn(3, 6, 16, generator=g)]
    b = tmp_path / "b"
    onp.capture(StridedPool().eval(), fx, b)
    dims = onnx.load(str(b / "model.onnx")).graph.input[0].type.tensor_type.shape.dim
    assert dims[1].dim_param, "the sequence dim is not dynamic in the graph"
    for cmd in ("check", "diagnose"):
        r = run([onnxparity, cmd, b, "--format", "json"])
        doc = json.loads(r.stdout)
        assert r.returncode == 1
        if cmd == "check":
            assert [f["status"] for f in doc["fixtures"]] == ["pass", "fail", "pass"]
        top = doc["causes"][0]
        assert top["id"] == "traced-control-flow", (cmd, top)
        # dynamo: the numbers decide (medium in check, high with diagnose's shape
        # probe); legacy: its TracerWarning on the branch, as rules 1 and 5 weigh it
        if json.loads((b / "parity.json").read_text())["exporter"] == "dynamo":
            assert top["confidence"] in ("high", "medium"), (cmd, top)
        assert "baked-shape" not in [c["id"] for c in doc["causes"] if c["confidence"] != "low"]
        assert "torch.cond" in top["fix"] or "torch.where" in top["fix"], top["fix"]


def test_passthrough_before_an_inplace_residual(onnxparity, tmp_path):
    """RepVGG: ``x = self.drop_path(conv_1x1(x) + conv_kxk(x)); x += identity``.
    The ReLU after it takes the same tensor object, changed in place: the
    pass-through's value is the branch sum, not the in-place residual Add
    (the tensor's version counter tells them apart); bisect agrees."""
    from models3 import TinyRepVGG
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    b = tmp_path / "b"
    onp.capture(TinyRepVGG().eval(), [torch.randn(2, 3, 32, 32, generator=g) for _ in range(2)], b)
    index = json.loads((b / "test_data_set_0" / "intermediates" / "index.json").read_text())
    made_by = {o: n for n in onnx.load(str(b / "model.onnx")).graph.node for o in n.output}
    by_module = {e["module"]: e["value"] for e in index["entries"]}
    add = made_by[by_module["block.drop_path"]]
    assert add.op_type == "Add"
    # the branch sum adds the two conv branches; the residual adds the identity BatchNorm
    assert by_module.get("block.identity") not in add.input, (add, by_module.get("block.identity"))
    r = run([onnxparity, "bisect", b, "--format", "json"])
    assert r.returncode == 0 and json.loads(r.stdout)["verdict"] == "agrees", r.stdout[-1500:]


# --- 1. bisect names the branch a trace fixed ---------------------------------

def test_bisect_names_the_branch_that_left_no_node(onnxparity, tmp_path):
    """The traced fixture's features have a negative mean, the second
    fixture's a positive one (computed here on eager): the graph holds the
    path without the halving, so the second fixture diverges at the first
    node after the gate.  That node is all bisect can name by the numbers;
    the branch that decided it has no node.  bisect names the source line and
    the module whose forward holds it (gate), as check's cause does."""
    import inspect
    torch.manual_seed(0)
    m = GatedMLP().eval()
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 8, generator=g) + s for s in (3.0, -3.0, 3.0)]
    with torch.no_grad():
        means = [m.gate.proj(torch.relu(m.inp(f))).mean().item() for f in fx]
    assert means[0] < 0 < means[1] and means[2] < 0, means  # the planted paths
    b = tmp_path / "b"
    # torch.export refuses the branch (its ExportError names the line and
    # torch.cond); the legacy exporter traces the one path
    onp.capture(m, fx, b, exporter="legacy")
    src, first = inspect.getsourcelines(ScaleWhenPositive.forward)
    line = first + next(i for i, s in enumerate(src) if "if h.mean() > 0" in s)
    r = run([onnxparity, "bisect", b, "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["verdict"] == "diverges", r.stdout[-1500:]
    assert doc["first_divergent"]["module"] == "out"  # the numbers' first value after it
    br = doc["branch"]
    assert br and br["where"].endswith(f"models3.py:{line}"), br
    assert br["modules"] == ["gate"] and br["code"] == "if h.mean() > 0:" and br["traced_fixture"] == 0
    text = run([onnxparity, "bisect", b]).stdout
    assert f"models3.py:{line} (`if h.mean() > 0:`) in module gate" in text, text
    rc, chk = check_json(onnxparity, b)
    top = chk["causes"][0]
    assert rc == 1 and top["id"] == "traced-control-flow", top
    assert any(f"models3.py:{line}" in e and "in module gate" in e for e in top["evidence"]), top


# --- 3. detections chosen among exact ties --------------------------------------

def test_detections_chosen_among_exact_ties_are_op_semantics(onnxparity, tmp_path):
    """Every score ties exactly; torch's top-k keeps some 8 of 64, ONNX's
    TopK the 8 lowest indices, which sit on one box: non-maximum suppression
    keeps another count.  Established here: eager's scores all equal (read
    back), ONNX Runtime's own run returns another number of boxes.  With the
    capture's tie-ordered reference (eager rerun with ONNX's tie order) the
    fixtures pass with the tie-order note (tests/py/test_tie_order.py);
    without it, no shape computation is wrong: check's top cause is
    op-semantics at the TopK, with the ties as evidence, and unknown at most
    low."""
    pytest.importorskip("torchvision")
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    fx = [torch.rand(1, 3, 16, 16, generator=g) for _ in range(2)]
    b = tmp_path / "b"
    onp.capture(DeadFeatureDetector().eval(), fx, b, output_names=["boxes", "scores"], dynamic_axes=None)
    d = b / "test_data_set_0"
    eager_scores = pb(d / "output_1.pb")
    assert np.unique(eager_scores).size == 1  # exact ties
    r = run([onnxparity, "run", b / "model.onnx", d / "input_0.pb", "--save", tmp_path / "o",
             "--save-format", "pb"])
    assert r.returncode == 0, r.stderr
    assert pb(tmp_path / "o" / "output_0.pb").shape[0] != pb(d / "output_0.pb").shape[0]
    topk = [n.name for n in onnx.load(str(b / "model.onnx")).graph.node if n.op_type == "TopK"]
    rc, chk = check_json(onnxparity, b)
    assert rc == 0 and all(f["tie_order"] == "matched" for f in chk["fixtures"]), chk["fixtures"]
    for t in b.glob("test_data_set_*/tie_ordered"):  # the judgment without the tie reference
        shutil.rmtree(t)
    rc, chk = check_json(onnxparity, b)
    top = chk["causes"][0]
    assert rc == 1 and (top["id"], top["confidence"]) == ("op-semantics", "medium"), chk["causes"]
    assert top["node"] == topk[0] and any("tie exactly" in e for e in top["evidence"]), top
    assert all(c["confidence"] == "low" for c in chk["causes"] if c["id"] == "unknown")


def _permute_rows(src, dst, rows, keep=()):
    """model.onnx of bundle src into bundle dst with every output but those
    named in `keep` taken through a Gather on dim 0 after it: rows (i, j)
    exchanged, or, for a longer list, row r of the result is row rows[r]."""
    import shutil
    shutil.copytree(src, dst)
    m = onnx.load(str(dst / "model.onnx"))
    if len(rows) == 2:
        perm = list(range(30))
        perm[rows[0]], perm[rows[1]] = perm[rows[1]], perm[rows[0]]
    else:
        perm = list(rows)
    m.graph.initializer.append(numpy_helper.from_array(np.array(perm, np.int64), "planted_perm"))
    for o in m.graph.output:
        if o.name in keep:
            continue
        for node in m.graph.node:
            node.output[:] = [f"{o.name}_pre" if v == o.name else v for v in node.output]
            node.input[:] = [f"{o.name}_pre" if v == o.name else v for v in node.input]
        m.graph.node.append(onnx.helper.make_node("Gather", [f"{o.name}_pre", "planted_perm"], [o.name], axis=0))
    onnx.save(m, str(dst / "model.onnx"))


def _ort_outputs(onnxparity_bin, bundle, out):
    """ONNX Runtime's outputs of bundle's model on test_data_set_0 (onnxparity
    run --save), by position."""
    d = bundle / "test_data_set_0"
    ins = sorted(d.glob("input_*.pb"))
    r = run([onnxparity_bin, "run", bundle / "model.onnx", *ins, "--save", out, "--save-format", "pb"])
    assert r.returncode == 0, r.stderr
    return [pb(out / f"output_{k}.pb") for k in range(len(list(d.glob("output_*.pb"))))]


@pytest.fixture(scope="module")
def near_tie_detector(tmp_path_factory):
    """OneImageDetector captured once; i: the two rows i, i + 1 whose scores
    are closest (under 1e-6 apart, read back from eager's scores)."""
    b = tmp_path_factory.mktemp("near_tie") / "b"
    capture_detector(OneImageDetector, 3, b)
    s = pb(b / "test_data_set_0" / "output_1.pb")
    gaps = s[:-1] - s[1:]
    i = int(gaps.argmin())
    assert (gaps >= 0).all() and gaps[i] < 1e-6, (i, gaps[i])
    return b, i


def test_detections_swapped_among_near_ties_pass(onnxparity, near_tie_detector, tmp_path):
    """Detections sorted by score, two of them 3.4e-7 apart (read back from
    eager's scores): a graph that returns those two rows in the other order
    (planted: a permutation after the outputs) returns the same detections;
    the scores pass, and the boxes and labels pass as a near-tie reorder.
    The same permutation on the two best rows, far apart in score, fails."""
    b, i = near_tie_detector
    s = pb(b / "test_data_set_0" / "output_1.pb")
    assert s[0] - s[1] > 1e-6, s[:2]
    _permute_rows(b, tmp_path / "near", (i, i + 1))
    rc, chk = check_json(onnxparity, tmp_path / "near")
    assert rc == 0 and chk["verdict"] == "pass", json.dumps(chk["fixtures"][0]["outputs"])[:3000]
    notes = {o["name"]: o.get("note") or "" for o in chk["fixtures"][0]["outputs"]}
    assert "near-tie reorder" in notes["boxes"], notes  # (labels: both rows may hold one class)
    assert "near-tie" not in notes["scores"]
    for cmd in ("diagnose", "bisect"):  # the same judgment, outputs taken together
        r = run([onnxparity, cmd, tmp_path / "near", "--format", "json"])
        assert r.returncode == 0, (cmd, r.stdout[-2000:])
    _permute_rows(b, tmp_path / "far", (0, 1))
    rc, chk = check_json(onnxparity, tmp_path / "far")
    assert rc == 1 and chk["verdict"] == "fail"
    r = run([onnxparity, "bisect", tmp_path / "far", "--format", "json"])
    assert r.returncode == 1 and json.loads(r.stdout)["verdict"] == "diverges", r.stdout[-1500:]
    rc, chk = check_json(onnxparity, tmp_path / "near", "--strict-tol")
    assert rc == 1


def test_duplicated_detection_among_near_ties_fails(onnxparity, near_tie_detector, tmp_path):
    """Of the two near-tied detections i and i + 1, the graph returns row i
    twice (planted: a Gather [.., i, i, ..] after the boxes and labels; the
    scores untouched): detection i + 1 is lost.  Row i matches eager in
    place, so it is not free to stand for row i + 1 as well: check fails,
    and no output passes as a near-tie reorder."""
    b, i = near_tie_detector
    perm = list(range(30))
    perm[i + 1] = i
    _permute_rows(b, tmp_path / "dup", perm, keep=("scores",))
    want = pb(b / "test_data_set_0" / "output_0.pb")
    got = _ort_outputs(onnxparity, tmp_path / "dup", tmp_path / "o")[0]
    lost = want[i + 1]
    assert not np.isclose(got, lost, rtol=1e-4, atol=1e-4).all(axis=1).any()  # established: lost
    rc, chk = check_json(onnxparity, tmp_path / "dup")
    outs = {o["name"]: o for o in chk["fixtures"][0]["outputs"]}
    assert rc == 1 and chk["verdict"] == "fail", json.dumps(outs)[:2000]
    assert not outs["boxes"]["pass"] and "near-tie" not in (outs["boxes"].get("note") or "")


def test_rows_reversed_under_a_constant_score_fail(onnxparity, tmp_path):
    """Every score saturates to 1.0 (read back from eager: one value), so
    the scores order nothing; a graph returning the boxes and labels in
    reverse order (planted, scores untouched) is not a near-tie reorder:
    check fails."""
    b = tmp_path / "b"
    capture_detector(SaturatedDetector, 3, b)
    d = b / "test_data_set_0"
    assert np.unique(pb(d / "output_1.pb")).tolist() == [1.0]
    want = pb(d / "output_0.pb")
    assert not np.allclose(want, want[::-1])  # the reversal moves boxes
    _permute_rows(b, tmp_path / "rev", list(range(29, -1, -1)), keep=("scores",))
    got = _ort_outputs(onnxparity, tmp_path / "rev", tmp_path / "o")
    assert np.allclose(got[0], want[::-1], rtol=1e-4, atol=1e-3)  # established: reversed
    rc, chk = check_json(onnxparity, tmp_path / "rev")
    outs = {o["name"]: o for o in chk["fixtures"][0]["outputs"]}
    assert rc == 1 and not outs["boxes"]["pass"], json.dumps(outs)[:2000]
    assert outs["scores"]["pass"]


def test_sorted_activations_reordered_among_exact_zeros_pass(onnxparity, tmp_path):
    """torch.sort(relu(x), descending) of 20000 values, about half exact
    zeros: a graph returning the zeros' indices in reverse order (planted)
    returns the same sort.  The values pass; the indices pass as a near-tie
    reorder (each moved index is one of eager's among the tied zeros: read
    back), the rows paired by sorting, not by a scan per row."""
    g = torch.Generator().manual_seed(0)
    n = 20000
    b = tmp_path / "b"
    onp.capture(SortedActivations().eval(), [torch.randn(n, generator=g)], b,
                output_names=["values", "indices"], dynamic_axes=None)
    v = pb(b / "test_data_set_0" / "output_0.pb")
    first = int((v > 0).sum())
    assert 8000 < n - first < 12000 and (v[first:] == 0).all()
    perm = list(range(first)) + list(range(n - 1, first - 1, -1))
    _permute_rows(b, tmp_path / "rev", perm, keep=("values",))
    want_i = pb(b / "test_data_set_0" / "output_1.pb")
    got_i = _ort_outputs(onnxparity, tmp_path / "rev", tmp_path / "o")[1]
    moved = np.nonzero(got_i != want_i)[0]
    assert moved.size > 1000 and (v[moved] == 0).mean() > 0.99  # moved among the zeros
    assert sorted(got_i[moved].tolist()) == sorted(want_i[moved].tolist())
    rc, chk = check_json(onnxparity, tmp_path / "rev")
    outs = {o["name"]: o for o in chk["fixtures"][0]["outputs"]}
    assert rc == 0 and "near-tie reorder" in outs["indices"]["note"], json.dumps(outs)[:2000]


def test_instance_norm_without_running_stats_is_no_training_risk(onnxparity, tmp_path):
    """torch's exporter warns "operator 'instance_norm' is set to train=True"
    on every InstanceNorm without running statistics, even in eval: the call
    uses the input's own statistics, as ONNX's InstanceNormalization does.
    A fault planted in the Conv after it (weight x 1.5) must be named there,
    not ranked below a training-mode cause no number supports (a new user's
    trial ranked `training-mode` first).  The truth: the healthy bundle
    passes (its numbers match), and the planted Conv is the only change."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.InstanceNorm2d(8),
                              torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(8, 4, 1)).eval()
    g = torch.Generator().manual_seed(1)
    ok, bad = tmp_path / "ok", tmp_path / "bad"
    onp.capture(net, [torch.rand(2, 3, 16, 16, generator=g), torch.rand(3, 3, 16, 16, generator=g)], ok,
                exporter="legacy")
    warned = [w["message"] for w in json.loads((ok / "parity.json").read_text()).get("warnings", [])]
    assert any("'instance_norm' is set to train=True" in m for m in warned), warned  # the case
    rc, doc = check_json(onnxparity, ok)
    assert rc == 0 and not any(f["id"] == "ONP107" for f in doc["lint"]["findings"]), doc["lint"]
    m = onnx.load(str(ok / "model.onnx"))
    conv = [n for n in m.graph.node if n.op_type == "Conv"][1]  # the second Conv, after the norm
    plant_weight(ok, bad, m, conv)
    rc, doc = check_json(onnxparity, bad)
    assert rc == 1
    assert [c["id"] for c in doc["causes"]] == ["unknown"], doc["causes"]
    assert doc["causes"][0]["node"] == conv.name and doc["first_divergent"]["node"] == conv.name


def test_training_refusal_names_only_modules_that_compute_otherwise():
    """A model in training mode is refused; the message counts as behaving
    differently only modules whose output depends on the mode: a BatchNorm
    or InstanceNorm with running statistics, not one without (both modes use
    the batch's or instance's own statistics)."""
    from onnxparity.errors import TrainingModeError
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.InstanceNorm2d(4),
                              torch.nn.BatchNorm2d(4, track_running_stats=False),
                              torch.nn.BatchNorm2d(4)).train()
    with pytest.raises(TrainingModeError) as e:
        onp.capture(net, [torch.rand(2, 3, 4, 4)], "/nonexistent/never-written")
    msg = str(e.value)
    assert "1 of them behave differently in it: 3 (BatchNorm2d)" in msg, msg


class _TimeShiftScan(torch.nn.Module):
    """An RWKV-style block: a time shift by ZeroPad2d (the legacy export
    builds its pads from ConstantOfShape([2]), 2 entries, not the batch) and
    a scan over time in a Python loop, which the trace unrolls at the traced
    sequence length."""

    def __init__(self):
        super().__init__()
        self.time_shift = torch.nn.ZeroPad2d((0, 0, 1, -1))
        self.k = torch.nn.Linear(16, 16)
        self.o = torch.nn.Linear(16, 16)

    def forward(self, x):
        k = self.k(x - self.time_shift(x))
        out, acc = torch.zeros_like(k), torch.zeros_like(k[:, 0])
        for t in range(k.size(1)):
            acc = 0.5 * acc + k[:, t]
            out[:, t] = acc
        return self.o(out)


def test_unrolled_scan_is_a_traced_size_not_a_batch_constant(onnxparity, tmp_path):
    """Traced at (2, 8), judged at (3, 12) too: the unrolled loop covers 8
    steps, so the longer sequence fails; the pads' ConstantOfShape([2])
    equals the traced batch by chance only.  A new user's trial got
    `baked-shape` (high) at that ConstantOfShape from diagnose (lint ONP202)
    and other causes from check.  The truth, from the bundle's own numbers:
    the fixture at the traced length passes, the longer one fails; both
    commands now name a size that decided the path at export, and the lint
    raises no batch constant."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    onp.capture(_TimeShiftScan().eval(), [torch.randn(2, 8, 16, generator=g),
                                          torch.randn(3, 12, 16, generator=g)], tmp_path / "b",
                exporter="legacy")
    rc, doc = check_json(onnxparity, tmp_path / "b")
    assert rc == 1 and [f["status"] for f in doc["fixtures"]] == ["pass", "fail"]
    assert not any(f["id"] == "ONP202" for f in doc["lint"]["findings"]), doc["lint"]["findings"]
    assert doc["causes"][0]["id"] == "traced-control-flow", doc["causes"]
    r = run([onnxparity, "diagnose", tmp_path / "b", "--format", "json"])
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["causes"][0]["id"] == "traced-control-flow"


class _WarpAfterFeatures(torch.nn.Module):
    """RAFT's shape in small: a feature Conv, then a warp by GridSample
    (align_corners, zeros padding: lint ONP411 warns there) on a grid
    computed from the features, then a Conv head."""

    def __init__(self):
        super().__init__()
        self.feat = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.flow = torch.nn.Conv2d(8, 2, 3, padding=1)
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        f = torch.relu(self.feat(x))
        grid = torch.tanh(self.flow(f)).permute(0, 2, 3, 1)
        return self.head(torch.nn.functional.grid_sample(f, grid, align_corners=True))


def test_a_risk_elsewhere_ranks_below_the_node_where_the_error_starts(onnxparity, tmp_path):
    """A weight x1.5 planted in the feature Conv: bisect proves the error
    starts at that Conv alone (fed eager's input, it diverges by itself).
    The GridSample downstream carries a lint warning (ONP411); a new user's
    trial on torchvision's RAFT got op-semantics (low) there ranked first.
    A risk at another node explains none of a divergence that starts here:
    `unknown` at the planted Conv is the one cause, ONP411 latent.  The
    healthy bundle passes."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(2)
    ok, bad = tmp_path / "ok", tmp_path / "bad"
    onp.capture(_WarpAfterFeatures().eval(), [torch.rand(2, 3, 16, 16, generator=g),
                                              torch.rand(3, 3, 16, 16, generator=g)], ok, opset=16)
    rc, doc = check_json(onnxparity, ok)
    assert rc == 0, doc["causes"]
    assert any(f["id"] == "ONP411" for f in doc["lint"]["findings"]), "the case: a warning downstream"
    m = onnx.load(str(ok / "model.onnx"))
    conv = next(n for n in m.graph.node if n.op_type == "Conv")  # the feature Conv, first
    plant_weight(ok, bad, m, conv)
    rc, doc = check_json(onnxparity, bad)
    assert rc == 1 and doc["first_divergent"]["node"] == conv.name
    assert [(c["id"], c["node"]) for c in doc["causes"]] == [("unknown", conv.name)], doc["causes"]
    r = run([onnxparity, "bisect", bad, "--format", "json"])
    assert json.loads(r.stdout)["first_divergent"]["local"]["verdict"] == "local"
