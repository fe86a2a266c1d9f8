"""Issue 35: the exact-ties cause (op-semantics at a TopK whose indices are
used, docs/diagnose.md rule 1b) names the TopK only for an output computed
from it.  The rule reads the graph's data flow (onp_evidence.graph): a size
that differs on an independent branch is no tie's doing.

The model: scores that tie exactly feed a TopK whose indices gather them
(lint ONP401; the gathered values are the same whatever ties ONNX Runtime
breaks), and beside it an independent branch keeps the rows of a count
(x[:, 0] > 0.5), each row the same value.  Planted fault: the exported
Greater's threshold 0.5 -> 0.3 (the count changes, so that output's shape
does).  Before, check named op-semantics (medium) at the TopK first; now the
wrong size is what it is, a shape computation inside the graph (unknown,
medium), and the TopK is no more than its lint finding (low).

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_causes_tie_dataflow.py
"""
import json
import shutil

import pytest

from conftest import run

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import numpy as np  # noqa: E402

import onnxparity  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")


class TiesAndCount(torch.nn.Module):
    def forward(self, x):
        s = x[:, :16] * 0 + 0.25  # every score ties exactly
        top = s.topk(4, dim=1)
        picked = s.gather(1, top.indices)  # indices used; the same values whatever the choice
        keep = x[:, 0] > 0.5  # the independent branch: a count
        rows = torch.ones_like(x[:, :2])[keep] * 2.0  # one value in every row
        return picked, rows


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    from onnx import numpy_helper
    root = tmp_path_factory.mktemp("tiecount")
    g = torch.Generator().manual_seed(0)
    fx = [torch.rand(8, 20, generator=g) for _ in range(2)]
    onnxparity.capture(TiesAndCount().eval(), fx, root / "ok")
    shutil.copytree(root / "ok", root / "bad")
    m = onnx.load(str(root / "bad" / "model.onnx"))
    gt = next(n for n in m.graph.node if n.op_type == "Greater")
    c = next(n for n in m.graph.node if n.output[0] == gt.input[1])
    assert c.op_type == "Constant" and float(numpy_helper.to_array(c.attribute[0].t)) == 0.5
    t = c.attribute[0].t
    t.CopyFrom(numpy_helper.from_array(np.array(0.3, dtype=numpy_helper.to_array(t).dtype), t.name))
    onnx.save(m, str(root / "bad" / "model.onnx"))
    return root, fx


def check(binary, bundle):
    r = run([binary, "check", bundle, "--format", "json"])
    return r, json.loads(r.stdout)


def test_healthy_passes(onnxparity, bundles):
    root, _ = bundles
    r, doc = check(onnxparity, root / "ok")
    assert r.returncode == 0, r.stdout[-2000:]


def test_independent_branch_size_is_not_the_ties(onnxparity, bundles):
    root, fx = bundles
    # the planted fault, established outside the tool: the count of rows
    # kept differs between the exported threshold and eager's
    assert any(int((x[:, 0] > 0.5).sum()) != int((x[:, 0] > 0.3).sum()) for x in fx)
    r, doc = check(onnxparity, root / "bad")
    assert r.returncode == 1
    causes = {c["id"]: c for c in doc["causes"]}
    assert doc["causes"][0]["id"] == "unknown" and doc["causes"][0]["confidence"] == "medium"
    assert "a shape computation inside the graph is wrong" in " ".join(doc["causes"][0]["evidence"])
    semantics = causes.get("op-semantics")
    assert semantics is None or semantics["confidence"] == "low"
    assert not any("values chosen among tie exactly" in e for e in (semantics or {}).get("evidence", []))
