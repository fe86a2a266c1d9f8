"""The capture's hand-written fast paths against the library calls they
replace (issue #16: capture time): each must give what the slow path gives,
bit for bit or to the last digit the statistics keep.

- write_pb writes TensorProto bytes field by field: the bytes must be those
  of onnx.numpy_helper.from_array(...).SerializeToString() for every dtype a
  capture writes, every rank (0-d, empty, non-contiguous) and every name
  (empty, non-ASCII, longer than one varint byte), and ONNX must read them
  back as the same tensor.
- noise_stats computes in torch with a top-k quantile: numpy.quantile's
  "linear" value for every size around the 99.9 % boundary, with ties, and
  NaN / infinity on either side.
- value_types runs shape inference on the graph without its weights: the
  same types as inference on the whole model, over every libonnx-testdata
  model and real exports with weights of both exporters.
- the adequacy report's input statistics skip the masked copy of an
  all-finite input and reduce in the input's dtype: the moments, range,
  distinct fraction and constant rows the definitions give (computed here
  from them, in float64), with NaN, infinities, float16 and constant rows.
"""
import math
import pathlib

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

from onnxparity import _adequacy, _mapping
from onnxparity import _reference64 as r64
from onnxparity._tensors import write_pb

NAMES = ["x", "", "ünï/côde:" * 40]


def tensors():
    g = torch.Generator().manual_seed(3)
    yield torch.randn(2, 3, generator=g)
    yield torch.randn((), generator=g)
    yield torch.zeros(0, 5)
    yield torch.randn(3, generator=g).half()
    yield torch.randn(200, 300, generator=g)          # raw_data longer than two varint bytes
    yield torch.randn(3, 4, generator=g).t()          # not contiguous
    yield torch.randn(2, 2, generator=g).double()
    yield torch.arange(10)
    yield torch.arange(6, dtype=torch.int32).reshape(2, 3)
    yield torch.tensor([True, False, True])
    yield torch.tensor([1, 255], dtype=torch.uint8)
    yield torch.tensor([-1, 2], dtype=torch.int8)
    yield torch.tensor([-1, 2], dtype=torch.int16)
    yield torch.ones(1, 1, 1, 70000)[..., ::7]        # a large dim, a strided view


@pytest.mark.parametrize("name", NAMES, ids=["plain", "empty", "long-unicode"])
def test_write_pb_bytes_are_from_arrays(tmp_path, name):
    for i, t in enumerate(tensors()):
        p = tmp_path / f"t{i}.pb"
        write_pb(p, t, name)
        want = numpy_helper.from_array(t.contiguous().numpy(), name or None).SerializeToString()
        assert p.read_bytes() == want, (t.dtype, tuple(t.shape))
        back = onnx.load_tensor(str(p))
        assert back.name == name and list(back.dims) == list(t.shape)
        assert np.array_equal(numpy_helper.to_array(back), t.numpy())


def test_write_pb_bfloat16_keeps_the_bits(tmp_path):
    t = torch.tensor([1.0, -2.5, 3.0e38, float("inf")]).bfloat16()
    p = tmp_path / "b.pb"
    write_pb(p, t, "b")
    tp = onnx.load_tensor(str(p))
    assert tp.data_type == onnx.TensorProto.BFLOAT16 and list(tp.dims) == [4]
    assert tp.raw_data == t.view(torch.int16).numpy().tobytes()


def test_quantile_is_numpys_linear_quantile():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5, 10, 999, 1000, 1001, 1002, 1999, 2001, 12345, 400000):
        for kind in ("normal", "ties", "constant"):
            v = np.abs(rng.standard_normal(n))
            if kind == "ties":
                v = np.round(v, 1)
            elif kind == "constant":
                v[:] = 0.25
            got = r64._quantile_high(torch.from_numpy(v), 0.999)
            assert got == float(np.quantile(v, 0.999)), (n, kind)


def reference_stats(e32, e64):
    """noise_stats by its definition, in numpy."""
    a = e32.to(torch.float64).numpy().reshape(-1)
    b = e64.numpy().reshape(-1)
    both = np.isfinite(a) & np.isfinite(b)
    dev = np.abs(a[both] - b[both])
    sc = np.abs(b[np.isfinite(b)])
    return {"max_abs": float(dev.max()) if dev.size else 0.0,
            "rms": math.sqrt(float(np.mean(dev * dev))) if dev.size else 0.0,
            "q999": float(np.quantile(dev, 0.999)) if dev.size else 0.0,
            "scale_max": float(sc.max()) if sc.size else 0.0,
            "scale_rms": math.sqrt(float(np.mean(sc * sc))) if sc.size else 0.0,
            "count": int(a.size), "nonfinite": int(a.size - both.sum())}


@pytest.mark.parametrize("n", [1, 7, 4096, 401408])
@pytest.mark.parametrize("planted", ["finite", "nonfinite", "all-nan", "half", "huge"])
def test_noise_stats_match_the_definition(n, planted):
    """Every path of noise_stats: all finite (no mask), some or all values
    not finite (masked), a float16 eager side, and squares that overflow
    float64 (a float64 model output near 1e200: masked path, inf rms)."""
    g = torch.Generator().manual_seed(n)
    e64 = torch.randn(n, dtype=torch.float64, generator=g) * 3
    e32 = e64.float() + torch.randn(n, generator=g) * 1e-6
    if planted == "half":
        e32 = e32.half()
    elif planted == "huge":
        e64[0] = 1e200
        e32 = e64 * (1 + 1e-9)
    elif planted == "nonfinite" and n > 3:
        e32[1] = float("inf")
        e64[2] = float("nan")
        e64[3] = float("-inf")
    elif planted == "all-nan":
        e32[:] = float("nan")
    got, want = r64.noise_stats(e32, e64), reference_stats(e32, e64)
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        assert math.isclose(got[k], w, rel_tol=1e-12, abs_tol=1e-300), (k, got[k], w)


def test_noise_stats_of_an_empty_tensor():
    got = r64.noise_stats(torch.zeros(0), torch.zeros(0, dtype=torch.float64))
    assert got == {"max_abs": 0.0, "rms": 0.0, "q999": 0.0, "scale_max": 0.0, "scale_rms": 0.0,
                   "count": 0, "nonfinite": 0}


def test_top_by_blocks_is_the_exact_top_k():
    """_top reads long vectors by blocks: the values torch.topk gives over
    the whole vector, for random values, ties, a constant vector, the
    largest values packed in one block, in the tail that fills no block, and
    spread one per block."""
    g = torch.Generator().manual_seed(5)
    for n in (r64._BLOCK * 4000, r64._BLOCK * 4000 + 17, 300001):
        base = torch.rand(n, dtype=torch.float64, generator=g)
        cases = {"random": base, "ties": torch.round(base * 20) / 20,
                 "constant": torch.full((n,), 0.5, dtype=torch.float64)}
        packed = base * 0.5
        packed[64:64 + r64._BLOCK] = 2 + base[:r64._BLOCK]
        cases["one block"] = packed
        tail = base * 0.5
        tail[-(n % r64._BLOCK or 1):] = 3.0
        cases["tail"] = tail
        spread = base * 0.5
        spread[::r64._BLOCK] += 1
        cases["spread"] = spread
        for kind, v in cases.items():
            for need in (1, 2, 40, n // 1000 + 1, n // (4 * r64._BLOCK)):
                got = r64._top(v, need)
                want = torch.topk(v, need, largest=True, sorted=True).values
                assert torch.equal(got, want), (n, kind, need)


def test_noise_stats_in_any_memory_layout_with_a_reused_scratch():
    """noise_stats works in the float64 side's memory order: a channels_last
    float64 output against a contiguous float32 one (the float64 copy runs
    in channels_last), the reverse, a strided view that fills no block, and
    0-d; one scratch reused from a large tensor to a small one and back
    gives what the definition gives every time."""
    g = torch.Generator().manual_seed(9)
    scratch = r64.Scratch()

    def pair(shape):
        e64 = torch.randn(shape, dtype=torch.float64, generator=g)
        return (e64 + torch.randn(shape, dtype=torch.float64, generator=g) * 1e-7).float(), e64

    cl = torch.channels_last
    cases = []
    e32, e64 = pair((3, 16, 20, 20))
    cases.append(("f64 channels_last", e32, e64.contiguous(memory_format=cl)))
    cases.append(("f32 channels_last", e32.contiguous(memory_format=cl), e64))
    e32, e64 = pair((5,))
    cases.append(("small", e32, e64))
    e32, e64 = pair((40, 60))
    cases.append(("strided view", e32[:, ::3], e64[:, ::3]))
    cases.append(("transposed", e32.t(), e64.t()))
    e32, e64 = pair(())
    cases.append(("0-d", e32, e64))
    e32, e64 = pair((2, 8, 33, 7))
    cases.append(("large again", e32, e64.contiguous(memory_format=cl)))
    for kind, a, b in cases:
        want = reference_stats(a.contiguous(), b.contiguous())
        for got in (r64.noise_stats(a, b, scratch), r64.noise_stats(a, b)):
            assert sorted(got) == sorted(want), kind
            for k, w in want.items():
                assert math.isclose(got[k], w, rel_tol=1e-12, abs_tol=1e-300), (kind, k, got[k], w)


def test_float64_copy_converts_in_place_of_copying_twice():
    """make_model64 hands the deep copy float64 parameters through its memo:
    the same values, dtypes and layout as deepcopy + double + channels_last,
    shared parameters still shared, requires_grad kept, a Parameter subclass
    kept as its class, and the model given left as it was."""
    import copy

    class Marked(torch.nn.Parameter):
        pass

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.bn = torch.nn.BatchNorm2d(4)
            self.a, self.b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
            self.b.weight = self.a.weight
            self.a.bias.requires_grad_(False)
            self.scale = Marked(torch.ones(4))
            self.steps = torch.nn.Parameter(torch.tensor([3]), requires_grad=False)

    torch.manual_seed(0)
    net = Net()
    before = {k: (v.clone(), v.dtype, id(v)) for k, v in net.state_dict(keep_vars=True).items()}
    m64, fmt = r64.make_model64(net)
    want = copy.deepcopy(net).double().to(memory_format=torch.channels_last)
    assert fmt == "channels_last" and not m64.training
    got_sd, want_sd = m64.state_dict(), want.state_dict()
    assert sorted(got_sd) == sorted(want_sd)
    for k in want_sd:
        g_, w_ = got_sd[k], want_sd[k]
        assert g_.dtype == w_.dtype and g_.stride() == w_.stride() and torch.equal(g_, w_), k
    assert m64.a.weight is m64.b.weight and m64.a.weight.dtype == torch.float64
    assert not m64.a.bias.requires_grad and m64.a.weight.requires_grad
    assert type(m64.scale) is Marked and m64.scale.dtype == torch.float64
    assert m64.steps.dtype == torch.int64
    for k, v in net.state_dict(keep_vars=True).items():
        clone, dtype, ident = before[k]
        assert id(v) == ident and v.dtype == dtype and torch.equal(v, clone), k


def full_inference_types(mp):
    try:
        g = onnx.shape_inference.infer_shapes(mp).graph
    except Exception:
        g = mp.graph
    out = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        if vi.type.HasField("tensor_type"):
            tt = vi.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim] \
                if tt.HasField("shape") else None
            out[vi.name] = (tt.elem_type, dims)
    return out


def test_value_types_without_weights_equal_full_inference_on_testdata(testdata):
    models = sorted(testdata.glob("*/*/model.onnx"))
    assert len(models) > 500
    for path in models:
        mp = onnx.load(str(path))
        assert _mapping.value_types(mp) == full_inference_types(mp), path.parent.name


def test_value_types_without_weights_equal_full_inference_on_exports(tmp_path):
    torchvision = pytest.importorskip("torchvision")
    from onnxparity import _export
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
    models = [(torch.nn.TransformerEncoder(layer, num_layers=2).eval(), torch.randn(2, 16, 64)),
              (torchvision.models.mobilenet_v3_small().eval(), torch.randn(2, 3, 64, 64))]
    kw = {"dynamo": True} if _export.has_dynamo_exporter() else {}
    for i, (m, x) in enumerate(models):
        path = tmp_path / f"m{i}.onnx"
        torch.onnx.export(m, (x,), str(path), **kw)
        mp = onnx.load(str(path))
        assert any(t.ByteSize() > 4096 for t in mp.graph.initializer), "the test needs real weights"
        got = _mapping.value_types(mp)
        assert got == full_inference_types(mp)
        assert len(got) > len(mp.graph.input) + len(mp.graph.output)


def adequacy_inputs():
    g = np.random.default_rng(5)
    yield g.standard_normal((4, 3, 16, 16)).astype(np.float32)
    yield g.random((2, 5000)).astype(np.float16)
    x = g.standard_normal((3, 7)).astype(np.float32)
    x[1] = 2.5                                            # one constant row
    x[0, 3], x[2, 0], x[2, 5] = np.nan, np.inf, -np.inf  # non-finite values
    yield x
    yield np.round(g.standard_normal((2, 70000)) * 4).astype(np.float32)  # ties, > SAMPLE_VALUES
    yield np.full((2, 3), np.nan, dtype=np.float32)      # nothing finite


@pytest.mark.parametrize("k", range(5))
def test_adequacy_input_stats_follow_their_definitions(k):
    a = list(adequacy_inputs())[k]
    st = _adequacy._InputStats("x")
    st.add(a)
    flat = a.reshape(-1)
    fin = flat[np.isfinite(flat)]
    rows = a.reshape(a.shape[0], -1).astype(np.float64)
    assert st.rows == (a.shape[0] if fin.size else 0)
    if not fin.size:
        assert st.n == 0
        return
    x = fin.astype(np.float64)
    assert st.n == x.size
    for got, power in ((st.s1, 1), (st.s2, 2), (st.s3, 3), (st.s4, 4)):
        assert got == pytest.approx(float(np.sum(x ** power)), rel=1e-12, abs=1e-9)
    assert (st.lo, st.hi) == (float(x.min()), float(x.max()))
    look = x[:_adequacy.SAMPLE_VALUES]
    assert st.distinct == [len(np.unique(look)) / look.size]
    assert st.constant_rows == int(np.sum(rows.max(axis=1) == rows.min(axis=1)))
