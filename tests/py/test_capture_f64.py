"""The float64 reference of the capture (issue #12): which fixtures it covers,
the reference64/ files, and the noise statistics in parity.json and
intermediates/index.json, each recomputed here from the written .pb files
with numpy, independently of the capture's own code.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_capture_f64.py
"""
import json
import math
import pathlib

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import numpy_helper  # noqa: E402

import onnxparity  # noqa: E402
from onnxparity.__main__ import parser  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")

@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


STAT_KEYS = ["max_abs", "rms", "q999", "scale_max", "scale_rms", "count", "nonfinite"]


def mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                               torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()


def batches(*sizes, seed=1, width=8):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, width, generator=g) for b in sizes]


def manifest(bundle):
    return json.loads((pathlib.Path(bundle) / "parity.json").read_text())


def load(path):
    return onnx.load_tensor(str(path))


def stats(e32, e64):
    """The documented statistics, written from the definition."""
    a = np.asarray(e32, dtype=np.float64).ravel()
    b = np.asarray(e64, dtype=np.float64).ravel()
    if a.size == 0:
        return dict.fromkeys(STAT_KEYS, 0)
    ok = np.isfinite(a) & np.isfinite(b)
    dev = a[ok] - b[ok]
    fin = b[np.isfinite(b)]
    return {"max_abs": float(np.max(np.abs(dev))) if dev.size else 0.0,
            "rms": math.sqrt(float(np.mean(dev ** 2))) if dev.size else 0.0,
            "q999": float(np.quantile(np.abs(dev), 0.999)) if dev.size else 0.0,
            "scale_max": float(np.max(np.abs(fin))) if fin.size else 0.0,
            "scale_rms": math.sqrt(float(np.mean(fin ** 2))) if fin.size else 0.0,
            "count": int(a.size), "nonfinite": int(a.size - ok.sum())}


def same_stats(got, want):
    assert sorted(got) == sorted(STAT_KEYS)
    for key in STAT_KEYS:
        assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-300), key


def reference_dirs(bundle):
    return sorted(p.parent.name for p in pathlib.Path(bundle).glob("test_data_set_*/reference64"))


def noise_keys(bundle):
    n = 0
    for idx in pathlib.Path(bundle).glob("test_data_set_*/intermediates/index.json"):
        n += sum("noise" in e for e in json.loads(idx.read_text())["entries"])
    return n


# ---------------------------------------------------------------- the files and the statistics

def test_outputs_statistics_match_the_written_files(tmp_path):
    b = tmp_path / "b"
    doc = onnxparity.capture(mlp(), batches(2, 2, 2, 5), b)
    noise = doc["noise"]
    assert noise["reference"] == "float64" and noise["reason"] is None
    assert noise["policy"] == {"per_shape_group": 2}
    assert noise["fixtures_covered"] == [0, 1, 3]
    assert isinstance(noise["seconds"], float) and noise["seconds"] >= 0
    assert [f["fixture"] for f in noise["fixtures"]] == [0, 1, 3]
    assert reference_dirs(b) == ["test_data_set_0", "test_data_set_1", "test_data_set_3"]
    assert manifest(b)["noise"] == noise
    for f in noise["fixtures"]:
        d = b / f["dir"]
        assert f["dir"] == f"test_data_set_{f['fixture']}"
        [out] = f["outputs"]
        assert out["name"] == "output" and out["file"] == "reference64/output_0.pb"
        t64, t32 = load(d / out["file"]), load(d / "output_0.pb")
        assert t64.data_type == onnx.TensorProto.DOUBLE and t64.name == t32.name
        e64, e32 = numpy_helper.to_array(t64), numpy_helper.to_array(t32)
        assert e64.shape == e32.shape and e64.dtype == np.float64
        same_stats({k: out[k] for k in STAT_KEYS}, stats(e32, e64))
        assert 0 < out["max_abs"] < 1e-5 and out["count"] == e32.size and out["nonfinite"] == 0
        # the reference is float64 eager, not the float32 output widened
        assert not np.array_equal(e64, e32.astype(np.float64))


def test_intermediates_statistics_match_the_written_files(tmp_path):
    b = tmp_path / "b"
    onnxparity.capture(mlp(), batches(3, 4), b)
    for k in (0, 1):
        d = b / f"test_data_set_{k}"
        idx = json.loads((d / "intermediates/index.json").read_text())
        assert idx["entries"], "the MLP has mapped intermediates"
        for e in idx["entries"]:
            assert "noise" in e, e["value"]
            e32 = numpy_helper.to_array(load(d / "intermediates" / e["file"]))
            # float64 eager of the same module call, computed here on our own copy
            m64 = mlp().double()
            x64 = torch.from_numpy(numpy_helper.to_array(load(d / "input_0.pb"))).double()
            got = {}
            hooks = [m.register_forward_hook(lambda mod, i, o, n=n: got.__setitem__(n, o.detach()))
                     for n, m in m64.named_modules() if n]
            with torch.no_grad():
                m64(x64)
            for h in hooks:
                h.remove()
            same_stats(e["noise"], stats(e32, got[e["module"]].numpy()))


def test_non_floating_output_gets_no_reference_file(tmp_path):
    class WithLabel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = mlp()

        def forward(self, x):
            y = self.net(x)
            return y, y.argmax(dim=1)

    b = tmp_path / "b"
    doc = onnxparity.capture(WithLabel().eval(), batches(2, 3), b)
    for f in doc["noise"]["fixtures"]:
        assert [o["file"] for o in f["outputs"]] == ["reference64/output_0.pb"]
        assert sorted(p.name for p in (b / f["dir"] / "reference64").iterdir()) == ["output_0.pb"]


def test_statistics_count_nonfinite_elements_apart(tmp_path):
    class Log(torch.nn.Module):
        def forward(self, x):
            return torch.log(x)  # log of a negative number is NaN, of 0 is -inf

    x = torch.tensor([[1.5, -1.0, 0.0, 3.0], [2.0, 7.0, 0.25, -2.0]])
    doc = onnxparity.capture(Log().eval(), [x], tmp_path / "b")
    [out] = doc["noise"]["fixtures"][0]["outputs"]
    assert out["count"] == 8 and out["nonfinite"] == 3
    e64 = numpy_helper.to_array(load(tmp_path / "b/test_data_set_0" / out["file"]))
    e32 = numpy_helper.to_array(load(tmp_path / "b/test_data_set_0/output_0.pb"))
    same_stats({k: out[k] for k in STAT_KEYS}, stats(e32, e64))
    assert math.isfinite(out["scale_max"]) and math.isfinite(out["max_abs"])


def test_empty_output_has_all_zero_statistics(tmp_path):
    class Empty(torch.nn.Module):
        def forward(self, x):
            return x * 2, x[:, :0] + 1

    doc = onnxparity.capture(Empty().eval(), batches(2, 3), tmp_path / "b")
    f = doc["noise"]["fixtures"][0]
    empty = next(o for o in f["outputs"] if o["file"] == "reference64/output_1.pb")
    assert {k: empty[k] for k in STAT_KEYS} == dict.fromkeys(STAT_KEYS, 0)


def test_same_rng_state_for_both_passes(tmp_path):
    class Noisy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            return self.fc(x) + torch.rand(x.shape[0], 8)

    doc = onnxparity.capture(Noisy().eval(), batches(2, 3), tmp_path / "b")
    for f in doc["noise"]["fixtures"]:
        # the same random draws in both passes: only float noise between them
        assert f["outputs"][0]["max_abs"] < 1e-6


# ---------------------------------------------------------------- which fixtures

@pytest.mark.parametrize("option, covered, policy", [
    (2, [0, 1, 3, 4], {"per_shape_group": 2}),
    (True, [0, 1, 3, 4], {"per_shape_group": 2}),
    (1, [0, 3], {"per_shape_group": 1}),
    (3, [0, 1, 2, 3, 4], {"per_shape_group": 3}),
    ("all", [0, 1, 2, 3, 4, 5], {"all": True}),
])
def test_k_per_shape_group(tmp_path, option, covered, policy):
    b = tmp_path / "b"
    doc = onnxparity.capture(mlp(), batches(2, 2, 2, 5, 5, 2), b, reference64=option, intermediates="all")
    assert doc["noise"]["policy"] == policy
    assert doc["noise"]["fixtures_covered"] == covered
    assert reference_dirs(b) == [f"test_data_set_{k}" for k in covered]
    for k in range(6):
        idx = json.loads((b / f"test_data_set_{k}/intermediates/index.json").read_text())
        assert all(("noise" in e) == (k in covered) for e in idx["entries"])


def test_shape_group_is_every_input_shape(tmp_path):
    class Two(torch.nn.Module):
        def forward(self, x, y):
            return x.sum(dim=1) + y.sum(dim=1)

    g = torch.Generator().manual_seed(2)
    fx = [(torch.randn(2, 3, generator=g), torch.randn(2, 4, generator=g)),
          (torch.randn(2, 3, generator=g), torch.randn(2, 5, generator=g)),
          (torch.randn(2, 3, generator=g), torch.randn(2, 4, generator=g))]
    doc = onnxparity.capture(Two().eval(), fx, tmp_path / "b", reference64=1, dynamic_axes="auto")
    assert doc["noise"]["fixtures_covered"] == [0, 1]


@pytest.mark.parametrize("option", [False, 0, "off"])
def test_off(tmp_path, option):
    b = tmp_path / "b"
    doc = onnxparity.capture(mlp(), batches(2, 3), b, reference64=option)
    n = doc["noise"]
    assert n["reference"] is None and n["reason"] == "reference64 is off"
    assert n["policy"] == {"per_shape_group": 0}
    assert n["fixtures_covered"] == [] and n["fixtures"] == []
    assert reference_dirs(b) == [] and noise_keys(b) == 0


@pytest.mark.parametrize("option", [-1, "some", 1.5])
def test_bad_option_is_refused(tmp_path, option):
    with pytest.raises(onnxparity.CaptureError, match="reference64"):
        onnxparity.capture(mlp(), batches(2), tmp_path / "b", reference64=option)
    assert not (tmp_path / "b").exists()


def test_command_line_option():
    p = parser()
    base = ["capture", "m:f", "--fixtures", "f.npz", "--out", "o"]
    assert p.parse_args(base).reference64 == 2
    assert p.parse_args(base + ["--reference64", "all"]).reference64 == "all"
    assert p.parse_args(base + ["--reference64", "off"]).reference64 == "off"
    assert p.parse_args(base + ["--reference64", "5"]).reference64 == 5
    with pytest.raises(SystemExit):
        p.parse_args(base + ["--reference64", "x"])


# ---------------------------------------------------------------- a model that cannot run in float64

class Float32Inside(torch.nn.Module):
    """Builds a float32 tensor inside forward and multiplies the activation by
    it: fine in float32, a dtype error in float64 (matmul does not promote)."""

    def __init__(self, fail_at_batch=None):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)
        self.fail_at_batch = fail_at_batch

    def forward(self, x):
        y = self.fc(x)
        if self.fail_at_batch is None or x.shape[0] == self.fail_at_batch:
            return y @ torch.eye(4)
        return y @ torch.eye(4, dtype=y.dtype)


def test_model_that_cannot_run_in_float64(tmp_path, binary):
    b = tmp_path / "b"
    doc = onnxparity.capture(Float32Inside().eval(), batches(2, 3), b)
    n = doc["noise"]
    assert n["reference"] is None
    # torch 1.13: "expected scalar type Double but found Float"; 2.x words it otherwise
    assert n["reason"].startswith("the float64 forward raised on fixture 0: RuntimeError: ")
    assert "\n" not in n["reason"] and ("Double" in n["reason"] or "double" in n["reason"])
    assert n["fixtures_covered"] == [] and n["fixtures"] == []
    assert reference_dirs(b) == [] and noise_keys(b) == 0
    # the capture itself is whole: check reads it and passes
    from onnxparity.testing import assert_export_parity
    assert_export_parity(b, binary=binary)


def test_failure_on_a_later_fixture_removes_the_whole_reference(tmp_path):
    b = tmp_path / "b"
    doc = onnxparity.capture(Float32Inside(fail_at_batch=5).eval(), batches(2, 3, 5), b,
                             reference64="all", dynamic_axes="batch")
    n = doc["noise"]
    assert n["reference"] is None and "RuntimeError" in n["reason"]
    assert reference_dirs(b) == [] and noise_keys(b) == 0


def test_model_that_cannot_be_copied(tmp_path):
    class Uncopyable(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 2)

        def __deepcopy__(self, memo):
            raise TypeError("no copies of this one")

        def forward(self, x):
            return self.fc(x)

    doc = onnxparity.capture(Uncopyable().eval(), batches(2), tmp_path / "b")
    assert doc["noise"]["reference"] is None
    assert doc["noise"]["reason"] == "copying the model to float64 failed: TypeError: no copies of this one"


def test_stateful_model_every_covered_fixture_from_the_same_state(tmp_path):
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)
            self.register_buffer("calls", torch.zeros(()))

        def forward(self, x):
            self.calls.add_(1)
            return self.fc(x) * self.calls

    torch.manual_seed(0)
    doc = onnxparity.capture(Counter().eval(), batches(2, 2, 2), tmp_path / "b", reference64="all",
                             exporter="legacy")
    # float32 truth and float64 reference both from calls = 0: only float noise apart
    assert [f["outputs"][0]["max_abs"] < 1e-5 for f in doc["noise"]["fixtures"]] == [True] * 3


def test_intermediates_paired_when_they_come_from_an_autograd_forward(tmp_path):
    """TransformerEncoderLayer takes its fused fast path under no_grad; the
    intermediates then come from a forward with autograd on, and the float64
    pass runs the same way, so every intermediate still gets its statistics."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(1)
    fx = [torch.randn(2, 5, 16, generator=g), torch.randn(3, 5, 16, generator=g)]
    doc = onnxparity.capture(model, fx, tmp_path / "b", exporter="legacy")
    if torch.__version__.startswith("1."):  # torch 1.13's fast path; 2.x traces the same path
        assert doc["intermediates"]["forward_grad_enabled"] is True
    for k in (0, 1):
        d = tmp_path / "b" / f"test_data_set_{k}"
        idx = json.loads((d / "intermediates/index.json").read_text())
        assert idx["entries"] and all("noise" in e for e in idx["entries"])
        for e in idx["entries"]:
            assert 0 <= e["noise"]["max_abs"] < 1e-4 and e["noise"]["count"] == int(np.prod(e["shape"]))


# ---------------------------------------------------------------- the float64 copy's memory format

class ConvNet(torch.nn.Module):
    """Two convolutions and a linear head; ``view`` flattens with .view(),
    which refuses the channels_last activations of the float64 copy."""

    def __init__(self, view=False):
        super().__init__()
        self.view = view
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        y = torch.relu(self.c2(torch.relu(self.c1(x))))
        return self.fc(y.view(y.shape[0], -1) if self.view else torch.flatten(y, 1))


def images(*sizes):
    g = torch.Generator().manual_seed(3)
    return [torch.randn(b, 3, 6, 6, generator=g) for b in sizes]


@pytest.mark.parametrize("view,layout", [(False, "channels_last"), (True, "contiguous")])
def test_conv_model_float64_copy_layout(tmp_path, view, layout):
    """A model with 2-D convolutions runs its float64 copy in channels_last
    (faster on a CPU); a forward that cannot (.view() of a channels_last
    activation) goes back to the usual layout and still gets its reference.
    Either way the reference is the float64 forward of the model, computed
    here on a plain float64 copy, to float64 rounding."""
    import copy
    torch.manual_seed(0)
    model = ConvNet(view).eval()
    fx = images(2, 3)
    b = tmp_path / "b"
    doc = onnxparity.capture(model, fx, b, exporter="legacy")
    n = doc["noise"]
    assert n["reference"] == "float64" and n["fixtures_covered"] == [0, 1]
    assert n["memory_format"] == layout
    if view:
        assert n["memory_note"].startswith("channels_last refused on fixture 0: RuntimeError: ")
    else:
        assert n["memory_note"] is None
    m64 = copy.deepcopy(model).double()
    with torch.no_grad():
        for k, x in enumerate(fx):
            want = m64(x.double()).numpy()
            got = numpy_helper.to_array(load(b / f"test_data_set_{k}" / "reference64" / "output_0.pb"))
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            e32 = numpy_helper.to_array(load(b / f"test_data_set_{k}" / "output_0.pb"))
            entry = n["fixtures"][k]["outputs"][0]
            same_stats({key: entry[key] for key in STAT_KEYS}, stats(e32, got))


def test_model_without_convolutions_keeps_its_layout(tmp_path):
    doc = onnxparity.capture(mlp(), batches(2), tmp_path / "b")
    assert doc["noise"]["memory_format"] == "contiguous" and doc["noise"]["memory_note"] is None


class BlockNet(torch.nn.Module):
    """Conv -> BatchNorm -> ReLU(inplace) twice, as in resnet: each BatchNorm
    output is overwritten by the in-place ReLU right after its module call,
    so its statistics must be taken from the live output in that call."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8)
        self.c2, self.b2 = torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.BatchNorm2d(8)
        self.r1, self.r2 = torch.nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)
        self.fc = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        y = self.r2(self.b2(self.c2(self.r1(self.b1(self.c1(x))))))
        return self.fc(torch.flatten(y, 1))


def test_intermediates_statistics_of_a_conv_net_with_in_place_relu(tmp_path):
    """The float64 copy runs in channels_last and its intermediates are
    reduced to statistics inside the forward (no float64 copy kept): every
    mapped intermediate's statistics, the BatchNorm outputs that the in-place
    ReLU overwrites included, equal the definition applied to the written
    float32 file and a float64 forward of a plain copy computed here (each
    module output cloned in its hook)."""
    import copy
    torch.manual_seed(0)
    model = BlockNet().eval()
    for bn in (model.b1, model.b2):  # running statistics that are not the identity
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    fx = images(2, 3)
    b = tmp_path / "b"
    doc = onnxparity.capture(model, fx, b, exporter="legacy")
    assert doc["noise"]["memory_format"] == "channels_last"
    m64 = copy.deepcopy(model).double()
    seen = set()
    for k, x in enumerate(fx):
        got = {}
        hooks = [m.register_forward_hook(lambda mod, i, o, n=n: got.__setitem__(n, o.detach().clone()))
                 for n, m in m64.named_modules() if n]
        with torch.no_grad():
            m64(x.double())
        for h in hooks:
            h.remove()
        d = b / f"test_data_set_{k}"
        for e in json.loads((d / "intermediates/index.json").read_text())["entries"]:
            assert "noise" in e, e["value"]
            e32 = numpy_helper.to_array(load(d / "intermediates" / e["file"]))
            want = stats(e32, got[e["module"]].numpy())
            # the two float64 forwards (channels_last there, contiguous here)
            # round differently, by ulps of float64 at the values' scale
            slack = 1e-13 * want["scale_max"]
            for key in STAT_KEYS:
                tol = slack if key in ("max_abs", "rms", "q999") else 1e-12 * abs(want[key])
                assert abs(e["noise"][key] - want[key]) <= tol, (e["module"], key)
            assert e["noise"]["max_abs"] > 100 * slack  # so the slack cannot hide a wrong value
            seen.add(e["module"])
    assert {"b1", "b2"} & seen, seen  # a BatchNorm output overwritten in place is among them
