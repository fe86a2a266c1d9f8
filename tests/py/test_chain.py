"""The deployment chain (docs/chain.md, issue 30): `onnxparity chain` over
real exports of torch 2.x (a torchvision ResNet-18 and a transformers BERT,
random weights, dynamo exporter) and the stages the transforms of
onnxparity._transforms make from them: ONNX Runtime's offline optimization,
onnxslim, float16 (keep_io_types), dynamic and static QDQ int8.

- Healthy stages are within their precision's envelope, and each stage's
  reported error is held against this test's own computation: the stage
  run with the onnxruntime Python package over the bundle's fixtures,
  compared with the eager outputs the bundle stores.  The tool is pointed at
  that package's own ONNX Runtime library (--ort-lib), so the two runs are
  the same computation.
- Planted faults, one per stage kind: a changed constant in the ORT-optimized
  graph, a float16 overflow in a normalization block, a quantized layer with
  a wrong scale.  Each is named at its stage, and its first divergent value
  at the node the test planted it in, in both graphs' names.

Needs the torch 2.x environment (.venv-torch2: torch, torchvision,
transformers, onnxruntime); skips elsewhere and says why.
"""
import json
import os
import subprocess

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
transformers = pytest.importorskip("transformers")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
np = pytest.importorskip("numpy")

import onnxparity as onp  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from conftest import cpu_flags  # noqa: E402
import ortpkg  # noqa: E402
import stageref  # noqa: E402
from onnxparity import _export, _transforms  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not _export.has_dynamo_exporter(),
                       reason=f"torch {torch.__version__} has no dynamo exporter"),
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                               "ignore::FutureWarning"),
]

HEALTHY = ["ort-basic", "ort-extended", "slim", "fp16", "int8-dynamic", "int8-qdq"]


def chain(onnxparity_bin, bundle, stages, *extra):
    """The chain document of `bundle` with `stages` [(name, model, precision)]."""
    args = [onnxparity_bin, "chain", str(bundle), "--format", "json", "--ort-lib", ortpkg.lib()]
    for name, model, prec in stages:
        args += ["--stage", f"{name}={model}", "--precision", f"{name}={prec}"]
    r = subprocess.run(args + list(extra), capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "onnxparity.chain/1"
    assert r.returncode == (0 if doc["verdict"] == "pass" else 1)
    return doc


def stage_of(doc, name):
    return next(s for s in doc["stages"] if s["name"] == name)


def own_max_abs(model, bundle):
    """{output name: max |stage - eager|} over the bundle's fixtures, by the
    onnxruntime Python package."""
    s = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    outs = [o.name for o in s.get_outputs()]
    worst = {n: 0.0 for n in outs}
    for ins, want in stageref.fixtures(bundle):
        got = s.run(None, dict(zip(names, ins)))
        for n, g, w in zip(outs, got, want):
            worst[n] = max(worst[n], float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))))
    return worst


def images(seed, *batches, size=64):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, 3, size, size, generator=g) for b in batches]


def text(seed, *shapes):
    g, out = torch.Generator().manual_seed(seed), []
    for b, s in shapes:
        m = torch.ones(b, s, dtype=torch.int64)
        m[0, s // 2:] = 0
        out.append({"input_ids": torch.randint(0, 100, (b, s), generator=g), "attention_mask": m})
    return out


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    d = tmp_path_factory.mktemp("resnet18")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    onp.capture(model, images(0, 2, 3), d / "bundle", exporter="dynamo")
    stages = _transforms.make(str(d / "bundle"), str(d / "stages"), HEALTHY)
    return d / "bundle", stages


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    d = tmp_path_factory.mktemp("bert")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, max_position_embeddings=64, hidden_size=64,
                                  num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
    model = transformers.BertModel(cfg).eval()
    onp.capture(model, text(1, (2, 8), (3, 12)), d / "bundle", exporter="dynamo")
    stages = _transforms.make(str(d / "bundle"), str(d / "stages"), HEALTHY)
    return d / "bundle", stages


@pytest.fixture(scope="module")
def vit(tmp_path_factory):
    """ViT without int8-qdq: static per-tensor QDQ of this ViT leaves int8's
    envelope (docs/chain.md, "Measured"): not a healthy stage."""
    d = tmp_path_factory.mktemp("vit")
    torch.manual_seed(0)
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, intermediate_size=128)
    model = transformers.ViTModel(cfg).eval()
    g = torch.Generator().manual_seed(5)
    onp.capture(model, [{"pixel_values": torch.randn(b, 3, 32, 32, generator=g)} for b in (2, 3)],
                d / "bundle", exporter="dynamo")
    stages = _transforms.make(str(d / "bundle"), str(d / "stages"), [t for t in HEALTHY if t != "int8-qdq"])
    return d / "bundle", stages


def check_healthy(onnxparity_bin, bundle, stages):
    doc = chain(onnxparity_bin, bundle, [(s["name"], s["model"], s["precision"]) for s in stages])
    assert doc["verdict"] == "pass" and doc["first_beyond"] is None, json.dumps(doc, indent=1)[:3000]
    assert doc["noise_reference"] == "float64"
    assert [s["name"] for s in doc["stages"]] == ["export"] + [s["name"] for s in stages]
    for s in stages:
        st = stage_of(doc, s["name"])
        assert st["status"] == "within" and st["precision"] == s["precision"]
        own = own_max_abs(s["model"], bundle)
        for o in st["outputs"]:
            assert o["within"] and o["fixtures_compared"] == len(st["fixture_results"])
            # the tool's error is the test's own, and inside the envelope it reports
            assert o["max_abs"] == pytest.approx(own[o["name"]], rel=1e-3, abs=1e-6), (s["name"], o)
            assert o["max_abs"] <= o["envelope_max"]
    return doc


def test_resnet18_healthy_stages_are_within_their_precision(onnxparity, resnet):
    doc = check_healthy(onnxparity, *resnet)
    # the precision shows: float32 stages are at float32 noise, the others not
    exp = stage_of(doc, "export")["outputs"][0]
    assert stage_of(doc, "ort-extended")["outputs"][0]["max_abs"] < 10 * exp["envelope_max"]
    assert stage_of(doc, "fp16")["outputs"][0]["max_abs"] > 10 * exp["envelope_max"]
    assert stage_of(doc, "int8-qdq")["outputs"][0]["max_abs"] > stage_of(doc, "fp16")["outputs"][0]["max_abs"]


def _exact_int8_gemm():
    """Whether ONNX Runtime's u8s8 integer GEMM (a dynamically quantized
    model's MatMulInteger) is exact on this CPU: with VNNI it is; without
    it (AVX2) the kernel adds pairs of products in 16 bits and saturates
    (ONNX Runtime's quantization notes: reduce_range), so a dynamically
    quantized BERT leaves its int8 envelope there, a real finding of that
    CPU (measured on an AVX2 host), not a healthy stage."""
    flags = cpu_flags()
    return not flags or bool(flags & {"avx512_vnni", "avx_vnni"})


def test_bert_healthy_stages_are_within_their_precision(onnxparity, bert):
    bundle, stages = bert
    if _exact_int8_gemm():
        check_healthy(onnxparity, bundle, stages)
        return
    check_healthy(onnxparity, bundle, [s for s in stages if s["name"] != "int8-dynamic"])
    # without VNNI: the int8-dynamic stage's error is the test's own ONNX Runtime's
    st = next(s for s in stages if s["name"] == "int8-dynamic")
    doc = chain(onnxparity, bundle, [(st["name"], st["model"], st["precision"])])
    own = own_max_abs(st["model"], bundle)
    for o in stage_of(doc, "int8-dynamic")["outputs"]:
        assert o["max_abs"] == pytest.approx(own[o["name"]], rel=1e-3, abs=1e-6), o


def test_vit_healthy_stages_are_within_their_precision(onnxparity, vit):
    check_healthy(onnxparity, *vit)


# --- planted faults -------------------------------------------------------------------


def _producer(model, value):
    return next(n for n in model.graph.node if value in n.output)


def test_changed_constant_in_the_optimized_graph_is_named(onnxparity, resnet, tmp_path):
    """A weight of one fused Conv in ORT's extended graph scaled by 1.5: the
    ort-extended stage is the first beyond, at that node's output."""
    bundle, stages = resnet
    src = next(s["model"] for s in stages if s["name"] == "ort-extended")
    m = onnx.load(src)
    convs = [n for n in m.graph.node if n.op_type in ("Conv", "FusedConv")]
    node = convs[len(convs) // 2]
    inits = {i.name: i for i in m.graph.initializer}
    w = inits[node.input[1]]
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * 1.5, w.name))
    bad = tmp_path / "ort-extended-bad.onnx"
    onnx.save(m, bad)
    fp16 = next(s["model"] for s in stages if s["name"] == "fp16")
    doc = chain(onnxparity, bundle, [("ort-extended", bad, "fp32"), ("fp16", fp16, "fp16")])
    assert doc["verdict"] == "fail" and doc["first_beyond"] == "ort-extended"
    st = stage_of(doc, "ort-extended")
    assert st["status"] == "beyond" and stage_of(doc, "fp16")["status"] == "within"
    first = st["first_divergent"]["first"]
    assert first["value"] == node.output[0] and first["node"] == node.name
    assert first["op_type"] == node.op_type
    # the same value in the export: produced by the node the fusion ended in
    orig = onnx.load(str(bundle / "model.onnx"))
    p = _producer(orig, node.output[0])
    assert first["export_node"] == p.name and first["export_op_type"] == p.op_type
    assert st["cause"]["id"] == "graph-optimization" and st["cause"]["node"] == p.name
    assert stage_of(doc, "fp16")["cause"] is None


class NormBlock(torch.nn.Module):
    """A transformer-style block whose activations reach the thousands: a
    LayerNorm written by hand (torch.var: the squares of the centred
    values) and a softmax.  Fine in float32; in float16 the squares
    overflow (> 65504) where ONNX Runtime's CPU provider stores them in
    float16 (ReduceMean reads them)."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.out = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = self.up(x) * 1000.0
        h = (h - h.mean(-1, keepdim=True)) / torch.sqrt(h.var(-1, keepdim=True) + 1e-5)
        return self.out(torch.softmax(h, dim=-1) * h)


def test_fp16_overflow_is_named_at_the_square(onnxparity, tmp_path):
    torch.manual_seed(0)
    model = NormBlock().eval()
    g = torch.Generator().manual_seed(3)
    onp.capture(model, [torch.randn(4, 16, generator=g), torch.randn(6, 16, generator=g)],
                       tmp_path / "bundle", exporter="dynamo")
    stages = _transforms.make(str(tmp_path / "bundle"), str(tmp_path / "stages"), ["ort-basic", "fp16"])
    doc = chain(onnxparity, tmp_path / "bundle", [(s["name"], s["model"], s["precision"]) for s in stages])
    assert doc["first_beyond"] == "fp16" and stage_of(doc, "ort-basic")["status"] == "within"
    first = stage_of(doc, "fp16")["first_divergent"]["first"]
    # the test's own finding: the first float value of the export, in node
    # order, that leaves float16's range on some fixture
    value, node = first_overflow(tmp_path / "bundle" / "model.onnx", tmp_path / "bundle")
    assert first["value"] == value and first["export_node"] == node.name, (first, value)
    assert first["nonfinite"] > 0 and first["op_type"] == node.op_type == "Mul"
    assert first["node"] == node.name  # the converter keeps node names
    cause = stage_of(doc, "fp16")["cause"]
    assert cause["id"] == "reduced-precision" and f"node_block_list=['{node.name}']" in cause["fix"]


def first_overflow(model_path, bundle):
    """(value, node) of the export: the first node output, in node order,
    whose magnitude exceeds float16's largest finite value (65504) on a
    fixture, by the onnxruntime Python package."""
    return stageref.beyond_float16(model_path, bundle)[0]


def test_quantized_layer_with_a_wrong_scale_is_named(onnxparity, resnet, tmp_path):
    """The weight scale of one Conv in the QDQ model multiplied by 4: the
    int8-qdq stage is the first beyond, at that Conv."""
    bundle, stages = resnet
    src = next(s["model"] for s in stages if s["name"] == "int8-qdq")
    m = onnx.load(src)
    inits = {i.name: i for i in m.graph.initializer}
    dq = {n.output[0]: n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    convs = [n for n in m.graph.node if n.op_type == "Conv" and n.input[1] in dq]
    node = convs[len(convs) // 2]
    scale = inits[dq[node.input[1]].input[1]]
    scale.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(scale) * 4, scale.name))
    bad = tmp_path / "int8-qdq-bad.onnx"
    onnx.save(m, bad)
    doc = chain(onnxparity, bundle, [("int8-qdq", bad, "int8")])
    assert doc["first_beyond"] == "int8-qdq"
    first = stage_of(doc, "int8-qdq")["first_divergent"]["first"]
    assert first["value"] == node.output[0] and first["node"] == node.name and first["op_type"] == "Conv"
    orig = onnx.load(str(bundle / "model.onnx"))
    assert first["export_node"] == _producer(orig, node.output[0]).name
    cause = stage_of(doc, "int8-qdq")["cause"]
    assert cause["id"] == "reduced-precision" and f"nodes_to_exclude=['{first['export_node']}']" in cause["fix"]


# --- bad input: one line naming the stage or option, the documented exit code ---------


@pytest.mark.parametrize("args, code, says", [
    (["--stage", "a=missing.onnx"], 3, "missing.onnx"),
    (["--stage", "a=STAGE", "--precision", "a=fp8"], 2, "'fp8' is not fp32, fp16, bf16 or int8"),
    (["--stage", "a=STAGE", "--stage", "a=STAGE"], 2, "stage name 'a' given twice"),
    (["--stage", "export=STAGE"], 2, "'export'"),
    (["--stage", "a"], 2, "--stage wants NAME=MODEL.onnx"),
    (["--stage", "a=STAGE", "--precision", "b=fp16"], 2, "not 'b=fp16'"),
    ([], 2, "usage: onnxparity chain"),
])
def test_bad_stage_arguments(onnxparity, resnet, args, code, says):
    bundle, stages = resnet
    args = [a.replace("STAGE", stages[0]["model"]) for a in args]
    r = subprocess.run([onnxparity, "chain", str(bundle)] + args, capture_output=True, text=True)
    assert r.returncode == code and says in r.stderr and r.stdout == "", (r.returncode, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_stage_onnx_runtime_refuses_is_an_error_stage(onnxparity, resnet, tmp_path):
    """A model ORT cannot load (a float16 conversion without keep_io_types:
    float16 inputs, float32 fixtures) is stage `error`, exit 4, the others
    still judged."""
    bundle, stages = resnet
    bad = tmp_path / "fp16-io.onnx"
    _transforms.float16(str(bundle / "model.onnx"), str(bad), keep_io_types=False)
    args = [onnxparity, "chain", str(bundle), "--format", "json", "--stage", f"f={bad}",
            "--stage", f"slim={stages[2]['model']}"]
    r = subprocess.run(args, capture_output=True, text=True)
    doc = json.loads(r.stdout)
    assert r.returncode == 4 and doc["verdict"] == "error" and doc["first_beyond"] == "f"
    assert stage_of(doc, "f")["status"] == "error" and stage_of(doc, "f")["message"]
    assert stage_of(doc, "f")["precision"] == "fp16" and stage_of(doc, "f")["precision_from"] == "graph"
    assert stage_of(doc, "slim")["status"] == "within"


# --- SQNR along the graph (--per-value) ----------------------------------------------


def own_sqnr(export, stage, bundle):
    """{value: SQNR dB} of every float value both graphs compute under one
    name, fixture 0, by the onnxruntime Python package (export values of
    magnitude >= 1e30, mask sentinels, left out, as docs/chain.md says)."""
    feeds, _ = stageref.fixtures(bundle)[0]
    got = []
    for path in (export, stage):
        m = onnx.shape_inference.infer_shapes(onnx.load(str(path)))
        got.append((m, {v.name: v for v in m.graph.value_info}))
    (m0, vi0), (m1, vi1) = got
    made1 = {o for n in m1.graph.node for o in n.output}
    flt = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)
    common = [o for n in m0.graph.node for o in n.output
              if o in made1 and o in vi0 and o in vi1 and vi0[o].type.tensor_type.elem_type in flt
              and vi1[o].type.tensor_type.elem_type in flt]
    runs = []
    for m, vi in ((m0, vi0), (m1, vi1)):
        m.graph.output.extend(vi[o] for o in common if o not in {x.name for x in m.graph.output})
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        runs.append(dict(zip(common, s.run(common, dict(zip([i.name for i in s.get_inputs()], feeds))))))
    out = {}
    for v in common:
        a, b = runs[0][v].astype(np.float64).ravel(), runs[1][v].astype(np.float64).ravel()
        keep = np.isfinite(a) & np.isfinite(b) & (np.abs(a) < 1e30)
        se, ss = np.sum((a[keep] - b[keep]) ** 2), np.sum(a[keep] ** 2)
        out[v] = np.inf if se == 0 else 10 * np.log10(ss / se)
    producer = {o: n for n in m0.graph.node for o in n.output}
    cap = 20 * np.log10(2.0 ** 24)  # float32's resolution: an exact value counts as this
    drops = {v: min(min(out[i], cap) for i in producer[v].input if i in out) - min(out[v], cap)
             for v in out if any(i in out for i in producer[v].input)}
    return out, drops


def test_sqnr_along_a_dynamically_quantized_bert(onnxparity, bert):
    """--per-value: every value's SQNR equals the test's own, and the values
    whose node loses most are the ones the test finds losing most: the
    quantized MatMuls (MatMulInteger in the stage, MatMul in the export)."""
    if not _exact_int8_gemm():
        pytest.skip("no VNNI on this CPU: ONNX Runtime's u8s8 GEMM saturates, and the tool's ONNX "
                    "Runtime and the test's saturate differently (per-value SQNR 39 and 35 dB)")
    bundle, stages = bert
    st = next(s for s in stages if s["name"] == "int8-dynamic")
    doc = chain(onnxparity, bundle, [("int8-dynamic", st["model"], "int8")], "--per-value")
    div = stage_of(doc, "int8-dynamic")["first_divergent"]
    assert div["found"] is False and div["first"] is None  # a stage within names no divergence
    values = {p["value"]: p for p in div["values"]}
    own, own_drops = own_sqnr(bundle / "model.onnx", st["model"], bundle)
    both = [v for v in own if v in values and np.isfinite(own[v])]
    assert len(both) > 20
    for v in both:
        assert values[v]["sqnr_db"] == pytest.approx(own[v], abs=0.5), v
    top = max((p for p in div["values"] if p["drop_db"] is not None), key=lambda p: p["drop_db"])
    assert top["value"] in sorted(own_drops, key=own_drops.get)[-3:]
    assert top["export_op_type"] == "MatMul" and top["drop_db"] > 10
    m = onnx.load(st["model"])
    assert any(n.op_type == "MatMulInteger" for n in m.graph.node)


def test_chainmake_makes_pinned_stages_and_checks_them(onnxparity, resnet, tmp_path):
    """python -m onnxparity.chainmake: the stage files, stages.json with the
    versions of the packages that made them, and --check's exit code."""
    import sys
    bundle, _ = resnet
    env = dict(os.environ, ONNXPARITY_BIN=onnxparity)
    r = subprocess.run([sys.executable, "-m", "onnxparity.chainmake", str(bundle), str(tmp_path / "st"),
                        "--transform", "slim", "--transform", "int8-dynamic", "--check"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "verdict: pass" in r.stdout
    stages = json.loads((tmp_path / "st" / "stages.json").read_text())
    assert [s["name"] for s in stages] == ["slim", "int8-dynamic"]
    assert stages[0]["packages"]["onnxslim"] == "0.1.98" and stages[1]["precision"] == "int8"
    assert stages[1]["packages"]["onnxruntime"] == ort.__version__
    r = subprocess.run([sys.executable, "-m", "onnxparity.chainmake", str(bundle), str(tmp_path / "x"),
                        "--transform", "nope"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "unknown transform 'nope'" in r.stderr


def test_python_api_gives_the_tools_document(onnxparity, resnet):
    """onnxparity.api.chain (libonnxparity through ctypes, onp_api_chain) is
    the tool's chain: the same document, the same exit code; its errors are
    the tool's, typed."""
    from onnxparity import api
    bundle, stages = resnet
    picked = [s for s in stages if s["name"] in ("slim", "fp16")]
    doc = api.chain(bundle, stages=picked, ort_lib=ortpkg.lib())
    rc = doc.pop("exit_code")
    cli = chain(onnxparity, bundle, [(s["name"], s["model"], s["precision"]) for s in picked])
    assert rc == 0 and doc == cli
    with pytest.raises(api.UsageError, match="given twice"):
        api.chain(bundle, stages=[("a", picked[0]["model"]), ("a", picked[1]["model"])])
