"""Issue 35, Must-show 3: a healthy detector with near-tied scores in a
bounded bundle (one fixture stores no intermediates) passes bisect as it
passes check.

The shape of torchvision's SSDlite with its BatchNorm statistics
recalibrated: a strided conv backbone, per-anchor class and box heads, the
top anchors by score and their boxes gathered by index.  Here the near-ties
are made by construction: every kernel and every image is mirror-symmetric,
so each anchor's score equals its mirror twin's in exact arithmetic and the
float rounding of each runtime (eager, ONNX Runtime at each optimization
level) decides their order.  check passes the swapped detections as a
near-tie reorder (docs/compare.md).  Before issue 35's fix, bisect then
bisected every fixture against ONNX Runtime at opt-level disable, where the
same pairs swap between levels, and exited 1 at the TopK; now the fixture
without intermediates is judged at the level of its outputs as check judges
them, and bisect agrees.  A planted fault (one backbone Conv's weights
scaled) is still named.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_bisect_bounded_ties.py
"""
import json
import shutil

import pytest

from conftest import run

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import onnxparity  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")


class MirrorDet(torch.nn.Module):
    """A small SSD-style detector whose kernels are mirror-symmetric."""

    def __init__(self, anchors=6, classes=5, keep=60, width=16):
        super().__init__()
        layers, c = [], 3
        for i in range(4):
            layers += [torch.nn.Conv2d(c, width, 3, 2 if i < 3 else 1, 1), torch.nn.BatchNorm2d(width),
                       torch.nn.Hardswish()]
            c = width
        self.backbone = torch.nn.Sequential(*layers)
        self.cls = torch.nn.Conv2d(width, anchors * classes, 3, 1, 1)
        self.box = torch.nn.Conv2d(width, anchors * 4, 3, 1, 1)
        self.classes, self.keep = classes, keep
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, torch.nn.Conv2d):
                    m.weight.copy_((m.weight + m.weight.flip(-1)) / 2)
                if isinstance(m, torch.nn.BatchNorm2d):  # recalibrated-looking statistics
                    m.running_mean.copy_(0.1 * torch.randn(width, generator=g))
                    m.running_var.copy_(0.05 + 0.1 * torch.rand(width, generator=g))

    def forward(self, x):
        f = self.backbone(x)
        n = x.shape[0]
        logits = self.cls(f).permute(0, 2, 3, 1).reshape(n, -1, self.classes)
        deltas = self.box(f).permute(0, 2, 3, 1).reshape(n, -1, 4)
        boxes = 64 * torch.sigmoid(deltas)
        scores = logits.softmax(-1)[..., 1:].max(-1).values
        top = scores.topk(self.keep, dim=1)
        idx = top.indices.unsqueeze(-1).expand(-1, -1, 4)
        return boxes.gather(1, idx), top.values


def images():
    g = torch.Generator().manual_seed(0)
    out = []
    for _ in range(3):  # one shape group of 3: the default policy stores 2
        r = torch.rand(1, 3, 65, 65, generator=g)  # odd sizes keep stride 2 symmetric
        out.append((r + r.flip(-1)) / 2)
    return out


def model():
    torch.manual_seed(0)
    return MirrorDet().eval()


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("mirrordet")
    doc = onnxparity.capture(model(), images(), root / "ok")
    assert doc["intermediates"]["fixtures_stored"] == [0, 1]
    # planted: the second backbone Conv's weights x1.5 in the exported graph
    shutil.copytree(root / "ok", root / "bad")
    from onnx import numpy_helper
    mo = onnx.load(str(root / "bad" / "model.onnx"))
    conv = [n for n in mo.graph.node if n.op_type == "Conv"][1]
    for t in mo.graph.initializer:
        if t.name == conv.input[1]:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 1.5, t.name))
    onnx.save(mo, str(root / "bad" / "model.onnx"))
    return root, conv.name


def cmd(binary, *args):
    r = run([binary, *map(str, args), "--format", "json"])
    return r, (json.loads(r.stdout) if r.stdout.strip() else None)


def test_scores_tie_in_exact_arithmetic():
    # established outside the tool: in float64 each kept score has its
    # mirror twin (the same value at the mirrored anchor), so the order among
    # them is float rounding's
    m = model().double()
    x = images()[0].double()
    with torch.no_grad():
        f = m.backbone(x)
        logits = m.cls(f).permute(0, 2, 3, 1)
        scores = logits.reshape(1, *logits.shape[1:3], -1, m.classes).softmax(-1)[..., 1:].max(-1).values
    assert torch.allclose(scores, scores.flip(2), rtol=0, atol=1e-15)
    assert scores.unique().numel() > 20  # distinct values apart from the mirror pairs


def test_healthy_bounded_bundle_agrees(onnxparity, bundles):
    root, _ = bundles
    r, doc = cmd(onnxparity, "check", root / "ok")
    assert r.returncode == 0, r.stdout[-2000:]
    r, doc = cmd(onnxparity, "bisect", root / "ok")
    assert r.returncode == 0, json.dumps(doc)[-2000:]
    assert doc["verdict"] == "agrees" and doc["reference"] == "eager" and doc["fixtures"] == [0, 1]
    assert "the 1 without them pass as check judges their outputs" in doc["reference_note"]


def test_levels_differ_at_the_ties(onnxparity, bundles):
    # why the fallback must not bisect at disable: the levels really differ
    # on this model; compared value by value with ONNX Runtime at opt-level
    # disable, the TopK leaves its one-ulp estimate (what the bounded
    # fallback did before, exit 1)
    root, _ = bundles
    r, dis = cmd(onnxparity, "bisect", root / "ok", "--reference", "disable")
    if r.returncode == 0:
        pytest.skip("ONNX Runtime at all orders the near-ties as at disable on this CPU")
    assert r.returncode == 1 and dis["first_divergent"]["op_type"] == "TopK"


def test_planted_fault_is_named(onnxparity, bundles):
    root, planted = bundles
    r, doc = cmd(onnxparity, "bisect", root / "bad")
    assert r.returncode == 1
    first = doc["first_divergent"]
    assert first["node"] == planted and first["local"]["verdict"] == "local"
    r, chk = cmd(onnxparity, "check", root / "bad")
    assert r.returncode == 1
