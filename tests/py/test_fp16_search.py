"""The float16 block-list search (docs/chain.md, issue 30 Must-show 3) on
real torch 2.x dynamo exports, the real converter (onnxruntime's
onnxruntime.transformers.float16) and the real ONNX Runtime:

- a normalization block whose activations reach the thousands (a LayerNorm
  written by hand: the squares of its variance leave float16's range),
  where the plain float16 conversion fails: the test finds that on its own
  (the onnxruntime Python package runs the converted model and compares
  with the eager outputs the bundle stores); the search's list, re-applied
  with the converter (the `fp16-region` transform), passes the chain, and
  the test's own run of that model is within the envelope the chain
  reports; every node the search grew its list with carries a value beyond
  float16's range in the float32 export (the test's own finding); the
  list's op types as an op_block_list pass too; onnxconverter-common's
  converter, as it is, with the list passes; the same list with
  onnxruntime's converter alone (its Cast pairs) still fails (why the
  region transform);
- the same block at ordinary scale, where the search has nothing to do;
- a budget too small to find a list: said so, exit 1.

Needs the torch 2.x environment (.venv-torch2); skips elsewhere.
"""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime.transformers.float16")

import onnxparity as onp  # noqa: E402
import ortpkg  # noqa: E402
import stageref  # noqa: E402
from onnxparity import _export, _fp16search, _transforms, api  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not _export.has_dynamo_exporter(),
                       reason=f"torch {torch.__version__} has no dynamo exporter"),
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                               "ignore::FutureWarning"),
]

class NormBlock(torch.nn.Module):
    """A LayerNorm written by hand (torch.var) and a softmax after a
    projection scaled by `scale`: at 1000 the centred values reach the
    thousands and their squares leave float16's range; at 1 all is small."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.up = torch.nn.Linear(16, 32)
        self.out = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = self.up(x) * self.scale
        h = (h - h.mean(-1, keepdim=True)) / torch.sqrt(h.var(-1, keepdim=True) + 1e-5)
        return self.out(torch.softmax(h, dim=-1) * h)


def _bundle(path, scale):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(3)
    onp.capture(NormBlock(scale).eval(), [torch.randn(4, 16, generator=g), torch.randn(6, 16, generator=g)],
                path, exporter="dynamo")
    return path


@pytest.fixture(scope="module")
def overflow(tmp_path_factory, lib):
    """The overflowing bundle and the search's answer on it (onnxparity.api.fp16_search)."""
    d = tmp_path_factory.mktemp("fp16search")
    bundle = _bundle(d / "bundle", 1000.0)
    return bundle, api.fp16_search(bundle, d / "search", ort_lib=ortpkg.lib())


def own_max_abs(model, bundle):
    """max |model - eager| over the bundle's fixtures and outputs, by the
    onnxruntime Python package (NaN/Inf anywhere: inf)."""
    s = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    worst = 0.0
    for ins, want in stageref.fixtures(bundle):
        for g, w in zip(s.run(None, dict(zip(names, ins))), want):
            g = g.astype(np.float64)
            worst = max(worst, float(np.max(np.abs(g - w))) if np.all(np.isfinite(g)) else np.inf)
    return worst


def beyond_float16(model_path, bundle):
    """The export's nodes with an output beyond float16's range on some
    fixture (float32, the onnxruntime Python package)."""
    return {n.name for _, n in stageref.beyond_float16(model_path, bundle)}


def chain(onnxparity_bin, bundle, name, model):
    r = subprocess.run([onnxparity_bin, "chain", str(bundle), "--format", "json", "--ort-lib", ortpkg.lib(),
                        "--stage", f"{name}={model}", "--precision", f"{name}=fp16"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    st = next(s for s in doc["stages"] if s["name"] == name)
    return doc, st


def test_search_list_reapplied_with_the_converter_passes(onnxparity, overflow, tmp_path):
    bundle, r = overflow
    # plain float16 fails, by the test's own run: NaN/Inf or beyond the chain's envelope
    plain = tmp_path / "plain.onnx"
    _transforms.float16(str(bundle / "model.onnx"), str(plain))
    doc, st = chain(onnxparity, bundle, "fp16", plain)
    assert doc["verdict"] == "fail" and st["status"] == "beyond"
    assert own_max_abs(plain, bundle) > st["outputs"][0]["envelope_max"]
    assert r["plain"]["status"] == "beyond" and r["plain"]["first_node"]
    # the search's answer: found, verified, small
    assert r["found"] and r["verdict"] == "pass" and r["status"] == "within", r["note"]
    names = {n.name: n.op_type for n in onnx.load(str(bundle / "model.onnx")).graph.node}
    blocked, grown = r["node_block_list"], r["grown_node_block_list"]
    assert blocked and set(blocked) <= set(grown) <= set(names)
    assert len(blocked) <= len(names) // 4, (blocked, len(names))
    assert r["checks"] <= r["budget"] and r["steps"][-1]["model"]
    # the nodes it grew its list with each carry a value float16 cannot hold
    big = beyond_float16(bundle / "model.onnx", bundle)
    assert set(grown) <= big, (grown, big)
    # re-applied with the converter (a fresh conversion): the chain passes,
    # and the test's own run of that model is within the envelope it reports
    stages = _transforms.make(str(bundle), str(tmp_path / "again"), ["fp16-region"], node_block_list=blocked)
    again = stages[0]["model"]
    doc, st = chain(onnxparity, bundle, "fp16-region", again)
    assert doc["verdict"] == "pass" and st["status"] == "within", json.dumps(st)[:2000]
    o = st["outputs"][0]
    own = own_max_abs(again, bundle)
    assert own == pytest.approx(o["max_abs"], rel=1e-3, abs=1e-6) and own <= o["envelope_max"]
    # still a float16 model: the projections' weights are float16
    m = onnx.load(again)
    gemm_w = {n.input[1] for n in m.graph.node if n.op_type == "Gemm"}
    assert gemm_w and all(i.data_type == onnx.TensorProto.FLOAT16 for i in m.graph.initializer if i.name in gemm_w)
    # the op-type form, re-applied too: those op types added to the
    # converter's default op_block_list
    from onnxruntime.transformers import float16 as f16
    kinds = sorted({names[n] for n in blocked})
    assert r["op_form"]["op_types"] == kinds and r["op_form"]["verdict"] == "pass"
    stages = _transforms.make(str(bundle), str(tmp_path / "ops"), ["fp16-region"],
                              op_block_list=list(f16.DEFAULT_OP_BLOCK_LIST) + kinds)
    doc, st = chain(onnxparity, bundle, "fp16-region", stages[0]["model"])
    assert doc["verdict"] == "pass" and own_max_abs(stages[0]["model"], bundle) <= st["outputs"][0]["envelope_max"]
    # onnxconverter-common's converter, as it is, with the list: it removes
    # the Cast pair between two blocked nodes whose value has one reader
    # (here the variance's Reshape into its Expand), and passes too
    pytest.importorskip("onnxconverter_common")
    occ = tmp_path / "occ.onnx"
    _transforms.float16_occ(str(bundle / "model.onnx"), str(occ), node_block_list=blocked)
    doc, st = chain(onnxparity, bundle, "fp16-occ", occ)
    assert doc["verdict"] == "pass" and own_max_abs(occ, bundle) <= st["outputs"][0]["envelope_max"]
    # the converter alone, its Cast pairs around each blocked node: the
    # overflowing values still pass through float16, the stage stays beyond
    for lst in (blocked, grown):
        bad = tmp_path / f"pairs{len(lst)}.onnx"
        _transforms.float16(str(bundle / "model.onnx"), str(bad), node_block_list=lst)
        _, st = chain(onnxparity, bundle, "fp16", bad)
        assert st["status"] == "beyond", lst


def test_a_healthy_model_has_nothing_to_block(tmp_path, lib):
    bundle = _bundle(tmp_path / "bundle", 1.0)
    assert not beyond_float16(bundle / "model.onnx", bundle)
    r = _fp16search.search(str(bundle), str(tmp_path / "search"), ort_lib=ortpkg.lib())
    assert r["found"] and r["verdict"] == "pass" and r["node_block_list"] == [] and r["checks"] == 1
    assert r["transform"] == "fp16" and r["plain"]["status"] == "within" and r["op_form"] is None
    assert own_max_abs(r["model"], bundle) < 1e-2


def test_a_budget_too_small_says_so(onnxparity, overflow, tmp_path):
    """The CLI over the overflowing bundle with 2 conversions allowed: no
    list, exit 1, the answer written and saying why; bad arguments exit 2."""
    bundle, full = overflow
    env = dict(os.environ, ONNXPARITY_BIN=onnxparity)
    cmd = [sys.executable, "-m", "onnxparity.chainmake", "fp16-search", str(bundle), str(tmp_path / "s"),
           "--ort-lib", ortpkg.lib()]
    p = subprocess.run(cmd + ["--budget", "2"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 1, p.stderr
    assert "no list found" in p.stdout and "budget of 2 conversions spent" in p.stdout
    r = json.loads((tmp_path / "s" / "fp16-search.json").read_text())
    assert not r["found"] and r["verdict"] == "fail" and r["node_block_list"] == [] and r["checks"] == 2
    # the steps it took are the full search's first two
    assert [s["node_block_list"] for s in r["steps"]] == [s["node_block_list"] for s in full["steps"][:2]]
    p = subprocess.run(cmd + ["--budget", "0"], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "--budget must be at least 1" in p.stderr and p.stdout == ""
