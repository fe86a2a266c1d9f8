"""Issue 35: a detection count that differs only because of exact ties
passes, with the tie-order note; a real defect beside the ties still fails.

The model is built to SSDlite's shape (not the survey's code): a small
convolutional body, a class head whose weights and bias are zero (as a fresh
SSDlite's features vanish through its random backbone, every anchor scores
exactly 1/C after the softmax), a box head, anchors on a grid whose
neighbours overlap, per class the top-k anchors by score (torch.topk among
exact ties), their boxes gathered, then torchvision.ops.batched_nms over all
classes.  torch's topk and ONNX's TopK keep other anchors among the ties
(ONNX: the lower index first), so non-maximum suppression runs on other
boxes and keeps another number of them.

The capture sees the ties (torch.topk, nms), reruns eager with ONNX's tie
order and stores it beside the fixture (tie_ordered/output_K.pb;
docs/formats.md).  Established independently here:
  - ONNX Runtime's NonMaxSuppression keeps tied boxes in ONNX's order: the
    tool's own ONNX Runtime runs a NonMaxSuppression model on tied scores
    and gives what _ties' ordered nms gives;
  - ONNX Runtime's detection count differs from eager's (onnxparity run),
    and equals that of the tie-ordered rerun;
  - without the tie-ordered files the same bundle fails;
  - a planted fault (the box head's weight x1.5 in model.onnx) fails check,
    diagnose and bisect: the tie reference does not launder it.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_tie_order.py
"""
import json
import shutil

import pytest

from conftest import plant_weight, run

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")

import numpy as np  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import onnxparity  # noqa: E402
from onnxparity import _ties  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")

CLASSES, PER_CELL, TOPK = 4, 3, 12


class DeadHeadSSD(torch.nn.Module):
    """An SSD-style detector on one 32x32 image whose class head is dead."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 16, 3, stride=2, padding=1), torch.nn.ReLU())
        self.cls = torch.nn.Conv2d(16, PER_CELL * CLASSES, 1)
        self.reg = torch.nn.Conv2d(16, PER_CELL * 4, 1)
        with torch.no_grad():
            self.cls.weight.zero_()
            self.cls.bias.zero_()
        cells = torch.arange(8.0) * 4 + 2
        cy, cx = torch.meshgrid(cells, cells, indexing="ij")
        per = []
        for s in (6.0, 9.0, 12.0):  # neighbours overlap: what NMS suppresses
            per.append(torch.stack([cx, cy, torch.full_like(cx, s), torch.full_like(cx, s)], -1))
        self.register_buffer("anchors", torch.stack(per, 2).reshape(-1, 4))  # [192, 4] cx cy w h

    def forward(self, x):
        f = self.body(x[:1])
        logits = self.cls(f)[0].permute(1, 2, 0).reshape(-1, CLASSES)
        deltas = self.reg(f)[0].permute(1, 2, 0).reshape(-1, 4)
        scores = logits.softmax(-1)
        a = self.anchors
        ctr = a[:, :2] + 0.1 * deltas[:, :2] * a[:, 2:]
        wh = a[:, 2:] * torch.exp(0.2 * deltas[:, 2:])
        boxes = torch.cat([ctr - wh / 2, ctr + wh / 2], 1)
        kb, ks, kl = [], [], []
        for c in range(1, CLASSES):
            top = scores[:, c].topk(TOPK)
            kb.append(boxes[top.indices])
            ks.append(top.values)
            kl.append(torch.full_like(top.indices, c))
        b, s, lab = torch.cat(kb), torch.cat(ks), torch.cat(kl)
        keep = torchvision.ops.batched_nms(b, s, lab, 0.45)
        return b[keep], s[keep], lab[keep]


def _read(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def _ort_outputs(onnxparity, bundle, tmp):
    """The model's outputs under the tool's ONNX Runtime (onnxparity run) on
    fixture 0, by output name."""
    out = tmp / "ort_out"
    p = run([onnxparity, "run", str(bundle / "model.onnx"), "--input",
             f"x={bundle / 'test_data_set_0' / 'input_0.pb'}", "--save", str(out)])
    assert p.returncode == 0, p.stderr
    return {f.stem: np.load(f) for f in out.glob("*.npy")}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("tieorder")
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(3)
    fx = [torch.rand(1, 3, 32, 32, generator=g) for _ in range(2)]
    onnxparity.capture(DeadHeadSSD().eval(), fx, root / "ok", input_names=["x"],
                       output_names=["boxes", "scores", "labels"], dynamic_axes=None)
    # without the tie-ordered reference: what check said before
    shutil.copytree(root / "ok", root / "noties")
    for d in (root / "noties").glob("test_data_set_*/tie_ordered"):
        shutil.rmtree(d)
    # the planted fault: the box head's weight x1.5
    m = onnx.load(str(root / "ok" / "model.onnx"))
    conv = [n for n in m.graph.node if n.op_type == "Conv"]
    reg = next(n for n in conv if "reg" in n.name or "reg" in n.input[1])
    plant_weight(root / "ok", root / "bad", m, reg)
    return root


def test_ort_nms_keeps_ties_in_onnx_order(onnxparity, tmp_path):
    """ONNX Runtime's NonMaxSuppression on tied scores, measured with the
    tool's ONNX Runtime: the order _ties' nms reproduces (by score, the lower
    index first among equal ones, suppression in that order)."""
    g = torch.Generator().manual_seed(1)
    n = 150
    c = torch.rand(n, 2, generator=g) * 60
    boxes = torch.cat([c, c + 8 + torch.rand(n, 2, generator=g) * 12], 1)
    scores = torch.tensor([0.2, 0.25, 0.2, 0.3, 0.2])[torch.randint(0, 5, (n,), generator=g)]
    graph = helper.make_graph(
        [helper.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou"], ["sel"])], "nms",
        [helper.make_tensor_value_info("boxes", onnx.TensorProto.FLOAT, [1, n, 4]),
         helper.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, [1, 1, n])],
        [helper.make_tensor_value_info("sel", onnx.TensorProto.INT64, [None, 3])],
        [numpy_helper.from_array(np.array([1000], np.int64), "mo"),
         numpy_helper.from_array(np.array([0.5], np.float32), "iou")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=7),
              str(tmp_path / "nms.onnx"))
    onnx.save_tensor(numpy_helper.from_array(boxes.numpy()[None]), str(tmp_path / "b.pb"))
    onnx.save_tensor(numpy_helper.from_array(scores.numpy()[None, None]), str(tmp_path / "s.pb"))
    p = run([onnxparity, "run", str(tmp_path / "nms.onnx"), "--input", f"boxes={tmp_path / 'b.pb'}",
             "--input", f"scores={tmp_path / 's.pb'}", "--save", str(tmp_path / "o")])
    assert p.returncode == 0, p.stderr
    ort = np.load(tmp_path / "o" / "sel.npy")[:, 2].tolist()
    with _ties.onnx_order():
        ours = torchvision.ops.nms(boxes, scores, 0.5).tolist()
    assert ort == ours
    # and the ties decide here: torch's own order keeps another list
    assert len(set(scores.tolist())) < n


def test_ordered_selection_ops():
    """topk, sort, max/argmax along a dim under onnx_order: the lower index
    first among equal values, as ONNX's TopK and ArgMax."""
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    with _ties.onnx_order():
        assert torch.topk(x, 2).indices.tolist() == [[1, 2], [0, 1]]
        assert x.topk(2, largest=False).indices.tolist() == [[3, 0], [0, 1]]
        assert torch.sort(x, dim=1, descending=True).indices[:, :3].tolist() == [[1, 2, 4], [0, 1, 2]]
        assert x.argmax(1).tolist() == [1, 0]
        assert torch.max(x, 1).indices.tolist() == [1, 0]
        assert x.max().item() == 3.0  # the whole-tensor reduction is left alone
    w = _ties.Watch()
    with _ties.watch(w):
        torch.topk(torch.tensor([3.0, 2.0, 1.0]), 2)  # no tie
    assert w.seen == []
    with _ties.watch(w):
        torch.topk(x, 2)
    assert w.seen == ["topk"]
    assert torch.topk is _ties._ORIG["torch.topk"]  # put back


def test_input_by_keyword():
    """torch.topk(input=x, ...) and the other functions called with their
    tensor by keyword run under the watch and ONNX's order as without them
    (they raised TypeError: the wrappers took the tensor by position only)."""
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    w = _ties.Watch()
    with _ties.watch(w):
        assert torch.equal(torch.topk(input=x, k=2).values, torch.topk(x, 2).values)
        assert torch.equal(torch.max(input=x, dim=1).values, x.amax(1))
        torch.sort(input=x, dim=1)
        torch.argmax(input=x, dim=1)
    assert w.seen == ["topk", "max", "sort", "argmax"]
    with _ties.onnx_order():
        assert torch.topk(input=x, k=2).indices.tolist() == [[1, 2], [0, 1]]
        assert torch.max(input=x, dim=1).indices.tolist() == [1, 0]
        assert torch.argmax(input=x, dim=1).tolist() == [1, 0]
        assert torch.sort(input=x, dim=1, descending=True).indices[:, :3].tolist() == \
            [[1, 2, 4], [0, 1, 2]]
    assert torch.topk is _ties._ORIG["torch.topk"]


def test_ties_recorded_only_where_they_change_outputs(bundles):
    doc = json.loads((bundles / "ok" / "parity.json").read_text())
    for f in doc["fixtures"]:
        assert "topk" in f["ties"]["ops"] and "nms" in f["ties"]["ops"], f["ties"]
        assert f["ties"]["outputs_differ"] and f["ties"]["dir"] == "tie_ordered"
        for j in range(3):
            assert (bundles / "ok" / f["dir"] / "tie_ordered" / f"output_{j}.pb").exists()


def test_count_differs_and_matches_the_tie_ordered_rerun(onnxparity, bundles, tmp_path):
    """The premise, measured: ONNX Runtime keeps another number of
    detections than eager, and the tie-ordered rerun's boxes are ONNX
    Runtime's."""
    ort = _ort_outputs(onnxparity, bundles / "ok", tmp_path)
    d = bundles / "ok" / "test_data_set_0"
    eager_boxes, tie_boxes = _read(d / "output_0.pb"), _read(d / "tie_ordered" / "output_0.pb")
    assert eager_boxes.shape[0] != ort["boxes"].shape[0]
    assert tie_boxes.shape == ort["boxes"].shape
    np.testing.assert_allclose(tie_boxes, ort["boxes"], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(_read(d / "tie_ordered" / "output_2.pb"), ort["labels"])


def test_check_passes_with_the_tie_order_note(onnxparity, bundles):
    p = run([onnxparity, "check", str(bundles / "ok"), "--format", "json"])
    doc = json.loads(p.stdout)
    assert p.returncode == 0, p.stdout[-2000:]
    assert doc["verdict"] == "pass"
    for f in doc["fixtures"]:
        assert f["status"] == "pass" and f["tie_order"] == "matched"
        for o in f["outputs"]:
            assert o["pass"] and o["note"].startswith("tie-order: eager chose among exactly tied"), o
    text = run([onnxparity, "check", str(bundles / "ok")]).stdout
    assert "tie-order: eager chose among exactly tied values in another order" in text


def test_without_the_tie_reference_it_fails(onnxparity, bundles):
    p = run([onnxparity, "check", str(bundles / "noties"), "--format", "json"])
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["verdict"] == "fail"
    assert all(f["status"] == "fail" and "tie_order" not in f for f in doc["fixtures"])


def test_unreadable_tie_reference(onnxparity, bundles, tmp_path):
    """A tie_ordered/output_J.pb that is not a tensor: check and diagnose
    stop with a one-line error naming it; bisect does not use it and says
    so (it named a first divergent value without a word before)."""
    bad = tmp_path / "garbage"
    shutil.copytree(bundles / "ok", bad)
    f = bad / "test_data_set_0" / "tie_ordered" / "output_0.pb"
    f.write_bytes(b"not a protobuf \xff\xff\xff")
    for cmd in ("check", "diagnose"):
        p = run([onnxparity, cmd, str(bad)])
        assert p.returncode == 3, (cmd, p.returncode, p.stderr[-2000:])
        assert p.stderr.strip().count("\n") == 0 and "tie_ordered/output_0.pb" in p.stderr, p.stderr
    p = run([onnxparity, "bisect", str(bad), "--format", "json"])
    assert p.returncode == 1, p.stdout[-3000:]
    note = json.loads(p.stdout)["reference_note"] or ""
    assert "tie_ordered/output_0.pb" in note and "not used" in note, note


def test_diagnose_and_bisect_pass(onnxparity, bundles):
    p = run([onnxparity, "diagnose", str(bundles / "ok"), "--format", "json"])
    assert p.returncode == 0, p.stdout[-3000:]
    assert json.loads(p.stdout)["verdict"] == "pass"
    p = run([onnxparity, "bisect", str(bundles / "ok"), "--format", "json"])
    assert p.returncode == 0, p.stdout[-3000:]
    doc = json.loads(p.stdout)
    assert doc["verdict"] == "agrees"
    assert "tie-order" in doc["reference_note"]
    tie_points = [c for c in doc["curve"] if "tie-order" in c.get("note", "")]
    assert tie_points  # the values after the TopK, recorded along eager's choice


def test_planted_fault_still_fails(onnxparity, bundles):
    """The box head's weight x1.5: against eager and against the tie-ordered
    reference alike the boxes are off, so check, diagnose and bisect fail."""
    p = run([onnxparity, "check", str(bundles / "bad"), "--format", "json"])
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["verdict"] == "fail", p.stdout[-2000:]
    assert all(f["status"] == "fail" and f.get("tie_order") == "differs" for f in doc["fixtures"])
    assert all("tie-order" not in o.get("note", "") for f in doc["fixtures"] for o in f["outputs"])
    assert run([onnxparity, "diagnose", str(bundles / "bad")]).returncode == 1
    p = run([onnxparity, "bisect", str(bundles / "bad"), "--format", "json"])
    assert p.returncode == 1, p.stdout[-3000:]
    first = json.loads(p.stdout)["first_divergent"]
    assert first is not None and first["op_type"] == "Conv", first
