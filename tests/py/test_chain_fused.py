"""The deployment chain across fused graphs whose values were renamed
(docs/chain.md, "The first divergent value"; issue 30): a BERT (2 layers,
hidden 64, random weights) exported with torch's legacy exporter and run
through ONNX Runtime's transformer optimizer (`optimize_model(model_type=
"bert")`), which fuses the embeddings into EmbedLayerNormalization (writing
a value of its own name), each self-attention into one Attention node, and
each residual Add + LayerNorm into SkipLayerNormalization.

- The renamed embedding output is matched by value to the export's
  embedding LayerNorm output; the pairing is held against the test's own
  run of both graphs with the onnxruntime Python package.
- A planted fault inside a fused node, one where the fused node writes a
  value of a new name (EmbedLayerNormalization's gamma) and one where it
  keeps the name of the value the group ends in (Attention's packed QKV
  weight): the stage and the node are named in both graphs, with the
  export nodes the fused node replaced (the group) and their torch modules
  (through the capture's module map).

Needs the torch 2.x environment (.venv-torch2: torch, transformers,
onnxruntime with its transformers optimizer); skips elsewhere.
"""
import json
import subprocess

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
np = pytest.importorskip("numpy")
optimizer = pytest.importorskip("onnxruntime.transformers.optimizer")

import consumers  # noqa: E402
import onnxparity as onp  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
import ortpkg  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                                        "ignore::FutureWarning")

EMB_LN = "/embeddings/LayerNorm/LayerNormalization_output_0"


def chain(onnxparity_bin, bundle, model, *extra):
    args = [onnxparity_bin, "chain", str(bundle), "--stage", f"bert-opt={model}", "--precision",
            "bert-opt=fp32", "--format", "json", "--ort-lib", ortpkg.lib(), *extra]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    consumers.validate_doc(doc, "chain --format json")
    return next(s for s in doc["stages"] if s["name"] == "bert-opt"), doc


def fixture_feeds(bundle, model):
    """The first fixture's inputs, by the model's input names."""
    names = [i.name for i in onnx.load(str(model)).graph.input]
    d = bundle / "test_data_set_0"
    out = {}
    for k, n in enumerate(names):
        p = d / f"input_{k}.pb"
        if p.exists():
            out[n] = numpy_helper.to_array(onnx.load_tensor(str(p)))
    return out


def values_of(model, feeds, names):
    """{name: array} of intermediate values, exposed as outputs, by the
    onnxruntime Python package."""
    m = onnx.load(str(model))
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: feeds[i.name] for i in s.get_inputs()}
    return dict(zip(names, s.run(names, feeds)))


@pytest.fixture(scope="module")
def fused(tmp_path_factory):
    d = tmp_path_factory.mktemp("bert-fused")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, max_position_embeddings=64, hidden_size=64,
                                  num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
    model = transformers.BertModel(cfg).eval()
    g, fx = torch.Generator().manual_seed(1), []
    for b, s in ((2, 8), (3, 12)):
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[0, s // 2:] = 0
        fx.append({"input_ids": torch.randint(0, 100, (b, s), generator=g), "attention_mask": mask})
    onp.capture(model, fx, d / "bundle", exporter="legacy")
    opt = optimizer.optimize_model(str(d / "bundle" / "model.onnx"), model_type="bert", num_heads=4,
                                   hidden_size=64, opt_level=0)
    stats = opt.get_fused_operator_statistics()
    assert stats["EmbedLayerNormalization"] == 1 and stats["Attention"] == 2, stats
    opt.save_model_to_file(str(d / "bert-opt.onnx"))
    return d, d / "bundle", d / "bert-opt.onnx"


def _node(m, op_type):
    return next(n for n in m.graph.node if n.op_type == op_type)


def _private_scaled(m, node, k, scale, rows=None):
    """node's input k replaced by a private copy scaled by `scale` (the
    optimizer shares initializers of equal contents between nodes)."""
    inits = {i.name: i for i in m.graph.initializer}
    a = numpy_helper.to_array(inits[node.input[k]]).copy()
    if rows is None:
        a = a * scale
    else:
        a[rows] = a[rows] * scale
    name = node.input[k] + "_planted"
    m.graph.initializer.append(numpy_helper.from_array(a.astype(np.float32), name))
    node.input[k] = name


def test_healthy_fused_graph_matches_renamed_values(onnxparity, fused):
    """Healthy: within, and with --per-value the embedding's renamed output is
    paired with the export's embedding LayerNorm, which this test's own run
    finds equal to it."""
    d, bundle, opt = fused
    st, doc = chain(onnxparity, bundle, opt, "--per-value")
    assert doc["verdict"] == "pass" and st["status"] == "within"
    fd = st["first_divergent"]
    assert fd["values_by_value"] >= 1
    emb = _node(onnx.load(str(opt)), "EmbedLayerNormalization")
    assert emb.output[0] not in {o for n in onnx.load(str(bundle / "model.onnx")).graph.node for o in n.output}
    point = next(v for v in fd["values"] if v["value"] == emb.output[0])
    assert point["matched"] == "value" and point["export_value"] == EMB_LN
    assert point["export_op_type"] == "LayerNormalization" and point["op_type"] == "EmbedLayerNormalization"
    # the pairing, established independently: both values by the onnxruntime package
    feeds = fixture_feeds(bundle, bundle / "model.onnx")
    a = values_of(bundle / "model.onnx", feeds, [EMB_LN])[EMB_LN]
    b = values_of(opt, feeds, [emb.output[0]])[emb.output[0]]
    assert a.shape == b.shape and np.max(np.abs(a - b)) < 1e-4 * np.max(np.abs(a))
    assert point["max_abs"] == pytest.approx(float(np.max(np.abs(a.astype(np.float64) - b))), rel=1e-3, abs=1e-7)
    # every pair by value is of one shape and correlates as the document says
    assert all(v["matched"] == "name" or v["correlation"] >= 0.9 for v in fd["values"])


def test_fault_in_a_fused_node_with_a_renamed_output_is_named(onnxparity, fused, tmp_path):
    """EmbedLayerNormalization's gamma x1.5: its output, a name the export
    does not have, is the first divergent value, paired with the export's
    embedding LayerNorm; the group is the embedding nodes it replaced."""
    d, bundle, opt = fused
    m = onnx.load(str(opt))
    emb = _node(m, "EmbedLayerNormalization")
    _private_scaled(m, emb, 5, 1.5)  # inputs: ids, segment, word, position, segment table, gamma, beta
    bad = tmp_path / "bert-opt-bad-gamma.onnx"
    onnx.save(m, bad)
    st, doc = chain(onnxparity, bundle, bad)
    assert doc["verdict"] == "fail" and doc["first_beyond"] == "bert-opt" and st["status"] == "beyond"
    fd = st["first_divergent"]
    first = fd["first"]
    assert first["value"] == emb.output[0] and first["node"] == emb.name
    assert first["matched"] == "value" and first["export_value"] == EMB_LN
    orig = onnx.load(str(bundle / "model.onnx"))
    ln = next(n for n in orig.graph.node if EMB_LN in n.output)
    assert first["export_node"] == ln.name and first["export_op_type"] == "LayerNormalization"
    assert st["cause"]["node"] == ln.name
    # the test's own numbers: gamma x1.5 makes the LayerNorm's output 1.5x (beta is 0 at init)
    feeds = fixture_feeds(bundle, bundle / "model.onnx")
    a = values_of(bundle / "model.onnx", feeds, [EMB_LN])[EMB_LN].astype(np.float64)
    b = values_of(bad, feeds, [emb.output[0]])[emb.output[0]].astype(np.float64)
    assert first["rel_err"] == pytest.approx(np.max(np.abs(a - b)) / np.max(np.abs(a)), rel=1e-3)
    group = {g["node"]: g["op_type"] for g in fd["export_group"]}
    assert ln.name in group and "Gather" in group.values() and "Add" in group.values()
    # the embeddings module's nodes (a Constant the exporter named without a path aside), no more
    assert all(n.startswith("/embeddings/") for n, op in group.items() if op != "Constant"), group
    assert not any(n.startswith("/encoder/") for n in group)
    # the modules, through the capture's module map: the embeddings' and nothing else
    mm = json.loads((bundle / "parity.json").read_text())["module_map"]
    assert mm["embeddings.LayerNorm"] == EMB_LN and "embeddings.LayerNorm" in fd["modules"]
    assert "embeddings.word_embeddings" in fd["modules"]
    assert all(x.startswith("embeddings") for x in fd["modules"]), fd["modules"]


def test_fault_in_a_fused_attention_is_named_with_its_group(onnxparity, fused, tmp_path):
    """The first Attention's query weights x1.5 (the packed QKV weight, an
    initializer the optimizer made): the Attention node in the stage, the
    Reshape the self-attention ends in in the export, and the export nodes of
    that self-attention as its group (its module path)."""
    d, bundle, opt = fused
    m = onnx.load(str(opt))
    att = _node(m, "Attention")
    w = numpy_helper.to_array(next(i for i in m.graph.initializer if i.name == att.input[1]))
    hidden = w.shape[1] // 3
    cols = np.zeros(w.shape[1], bool)
    cols[:hidden] = True
    inits = {i.name: i for i in m.graph.initializer}
    a = numpy_helper.to_array(inits[att.input[1]]).copy()
    a[:, cols] *= 1.5
    m.graph.initializer.append(numpy_helper.from_array(a, att.input[1] + "_planted"))
    att.input[1] = att.input[1] + "_planted"
    bad = tmp_path / "bert-opt-bad-qkv.onnx"
    onnx.save(m, bad)
    st, doc = chain(onnxparity, bundle, bad)
    assert doc["first_beyond"] == "bert-opt" and st["status"] == "beyond"
    fd = st["first_divergent"]
    first = fd["first"]
    assert first["value"] == att.output[0] and first["node"] == att.name and first["op_type"] == "Attention"
    assert first["matched"] == "name"
    orig = onnx.load(str(bundle / "model.onnx"))
    p = next(n for n in orig.graph.node if att.output[0] in n.output)
    assert first["export_node"] == p.name and p.name.startswith("/encoder/layer.0/attention/self/")
    group = {g["node"]: g["op_type"] for g in fd["export_group"]}
    ops = set(group.values())
    assert {"MatMul", "Softmax", "Transpose", "Reshape"} <= ops, group
    assert p.name in group
    # the query, key and value projections of layer 0 (the nodes the packed weight replaced)
    for proj in ("query", "key", "value"):
        assert f"/encoder/layer.0/attention/self/{proj}/MatMul" in group, (proj, sorted(group))
    # and nothing of the next layer or of the embeddings (their values are matched)
    assert not any(n.startswith(("/encoder/layer.1/", "/embeddings/")) for n in group), sorted(group)
    # the modules the fused Attention stands for: that self-attention and its projections
    for mod in ("encoder.layer.0.attention.self", "encoder.layer.0.attention.self.query",
                "encoder.layer.0.attention.self.key", "encoder.layer.0.attention.self.value"):
        assert mod in fd["modules"], (mod, fd["modules"])
    assert all(x.startswith("encoder.layer.0.attention.self") for x in fd["modules"]), fd["modules"]
