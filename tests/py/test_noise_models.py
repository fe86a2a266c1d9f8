"""The noise model on real architectures (issue #12).

Healthy torchvision networks with random weights, two deep segmentation nets
among them, captured with a float64 reference: check, bisect and diagnose all
pass (exit 0), and this test computes in float64 itself — ORT's outputs saved
by `onnxparity run`, the reference64 files, numpy — that ORT's error lies
inside the envelope the tool reports.  Then defects planted deep inside real
architectures: standalone bisect and check's own bisect both name the planted
node, with the error jump reported.  And vacuous comparisons and gate's
refusal to record a failing bundle.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_noise_models.py
"""
import json
import pathlib

import pytest

torch = pytest.importorskip("torch")
tv = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import numpy_helper  # noqa: E402

import onnxparity  # noqa: E402
from conftest import run  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")

K = 4.0  # ONP_NOISE_FACTOR
ULPS = 8.0  # ONP_NOISE_ULPS
EPS32 = 2.0 ** -23


def images(sizes, hw, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, 3, hw, hw, generator=g) for b in sizes]


class Seg(torch.nn.Module):
    """A torchvision segmentation net returning its 'out' map as a tensor."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def build(name):
    torch.manual_seed(0)
    m = tv.models
    seg = m.segmentation
    return {
        "resnet18": lambda: m.resnet18(),
        "mobilenet_v3_small": lambda: m.mobilenet_v3_small(),
        "shufflenet_v2_x0_5": lambda: m.shufflenet_v2_x0_5(),
        "squeezenet1_1": lambda: m.squeezenet1_1(),
        "fcn_resnet50": lambda: Seg(seg.fcn_resnet50(weights=None, weights_backbone=None,
                                                     num_classes=5, aux_loss=False)),
        "deeplabv3_mobilenet_v3_large": lambda: Seg(seg.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=5, aux_loss=False)),
    }[name]().eval()


HEALTHY = [("resnet18", 64), ("mobilenet_v3_small", 64), ("shufflenet_v2_x0_5", 64),
           ("squeezenet1_1", 64), ("fcn_resnet50", 64), ("deeplabv3_mobilenet_v3_large", 64)]


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(str(path))).astype(np.float64)


def ort_outputs(binary, bundle, fixture, out_dir):
    """ORT's outputs of one fixture, saved by the tool's `run` as .pb."""
    fx = pathlib.Path(bundle) / f"test_data_set_{fixture}"
    args = [binary, "run", pathlib.Path(bundle) / "model.onnx"]
    for p in sorted(fx.glob("input_*.pb")):
        args += ["--input", str(p)]
    args += ["--save", out_dir, "--save-format", "pb"]
    r = run(args)
    assert r.returncode == 0, r.stderr
    return sorted(pathlib.Path(out_dir).glob("*.pb"))


@pytest.mark.parametrize("name,hw", HEALTHY, ids=[n for n, _ in HEALTHY])
def test_healthy_architecture_is_float_noise_at_most(onnxparity, tmp_path, name, hw):
    bundle = tmp_path / "b"
    doc = onnxparity_capture(build(name), images([1, 2], hw), bundle)
    assert doc["noise"]["reference"] == "float64"
    r = run([onnxparity, "check", bundle, "--format", "json"])
    check = json.loads(r.stdout)
    assert r.returncode == 0 and check["verdict"] == "pass", r.stdout[-3000:]
    assert not [c for c in check["causes"] if c["id"] != "float-noise"]
    # the tool's envelope against this test's own float64 arithmetic
    for fx in check["fixtures"]:
        out = fx["outputs"][0]
        j = out["judgment"]
        assert j["noise_source"] == "float64"
        saved = ort_outputs(onnxparity, bundle, fx["index"], tmp_path / f"ort{fx['index']}")
        a = load(saved[0])
        e = load(pathlib.Path(fx["dir"]) / "output_0.pb")
        r64 = load(pathlib.Path(fx["dir"]) / "reference64" / "output_0.pb")
        ort_err = np.abs(a - r64).max()
        eager_err = np.abs(e - r64).max()
        scale = np.abs(e).max()
        assert abs(j["ort_vs_float64"]["max_abs"] - ort_err) <= 1e-12 * (1 + ort_err)
        assert abs(j["eager_vs_float64"]["max_abs"] - eager_err) <= 1e-12 * (1 + eager_err)
        # inside the envelope: ORT at most K times as far from float64 as eager, plus the floor
        floor = ULPS * EPS32 * scale
        assert ort_err <= K * eager_err + floor, (name, ort_err, eager_err)
        assert abs(j["envelope"]["max_abs"] - ((K + 1) * eager_err + floor)) <= 1e-9 * (1 + floor)
    r = run([onnxparity, "bisect", bundle, "--format", "json"])
    bis = json.loads(r.stdout)
    assert r.returncode == 0 and bis["verdict"] == "agrees", r.stdout[-3000:]
    assert bis["noise"]["fixtures_float64"] >= 1
    r = run([onnxparity, "diagnose", bundle, "--format", "json"])
    assert r.returncode == 0, r.stdout[-3000:]


def onnxparity_capture(model, fixtures, bundle, **kw):
    return onnxparity.capture(model, fixtures, bundle, reference64="all", **kw)


# --- defects planted deep inside real architectures ---------------------------------


def bn_in_training(model, path):
    """Leave one BatchNorm, deep inside, in training mode."""
    mod = dict(model.named_modules())[path]
    assert isinstance(mod, torch.nn.BatchNorm2d)
    mod.train()
    return model


def planted_bn(name, path):
    def make(tmp):
        model = bn_in_training(build(name), path)
        onnxparity_capture(model, images([2, 3], 64), tmp, allow_training=True)
        return tmp, "BatchNormalization", path
    return make


def planted_weight(name, factor):
    """A wrong constant: one Conv's weight scaled in model.onnx after the capture
    (the eager truth keeps the right one).  The planted node is that Conv."""
    def make(tmp):
        onnxparity_capture(build(name), images([2, 3], 64), tmp)
        mp = onnx.load(str(tmp / "model.onnx"))
        inits = {i.name: i for i in mp.graph.initializer}
        convs = [n for n in mp.graph.node if n.op_type == "Conv" and n.input[1] in inits]
        node = convs[len(convs) // 2]  # deep inside
        w = inits[node.input[1]]
        arr = numpy_helper.to_array(w) * factor
        w.CopyFrom(numpy_helper.from_array(arr.astype(np.float32), w.name))
        onnx.save(mp, str(tmp / "model.onnx"))
        return tmp, "Conv", node.name
    return make


PLANTED = {
    "resnet18-bn-layer3": planted_bn("resnet18", "layer3.0.bn2"),
    "shufflenet-bn-stage3": planted_bn("shufflenet_v2_x0_5", "stage3.2.branch2.4"),
    "resnet18-wrong-weight": planted_weight("resnet18", 1.5),
    "mobilenet-wrong-weight": planted_weight("mobilenet_v3_small", 0.5),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_planted_defect_is_named_by_bisect_and_check(onnxparity, tools, tmp_path, case):
    bundle, op, where = PLANTED[case](tmp_path / "b")
    repro = tmp_path / "repro"
    r = run([onnxparity, "bisect", bundle, "--format", "json", "--save-repro", repro])
    bis = json.loads(r.stdout)
    assert r.returncode == 1 and bis["verdict"] == "diverges", r.stdout[-3000:]
    fd = bis["first_divergent"]
    assert fd["op_type"] == op
    if op == "BatchNormalization":
        assert fd["module"] == where, fd
    else:
        assert fd["node"] == where, fd
    assert fd["verdict"] == "beyond-noise" and fd["jump"] > 1e3  # the error jumps at the defect
    assert bis["biggest_jump"] is not None and bis["biggest_jump"]["jump"] >= fd["jump"]
    # the reproducer (issue 13): the node alone, under a bare ONNX Runtime C program
    assert fd["local"]["verdict"] == "local" and fd["repro"] == str(repro)
    assert (repro / "README.md").exists() and (repro / "model.onnx").exists()
    lib = bis["environment"]["ort_library"]
    b = run([tools / "barerepro", lib, repro])
    assert b.returncode == 0, b.stderr
    got, scale = (float(v) for v in b.stdout.split()[1::2])
    assert got > 1e-3 * scale and got == pytest.approx(fd["local"]["max_abs"], rel=1e-6)
    r = run([onnxparity, "check", bundle, "--format", "json"])
    chk = json.loads(r.stdout)
    assert r.returncode == 1 and chk["verdict"] == "fail"
    assert chk["first_divergent"]["node"] == fd["node"]  # one routine, the same answer
    assert chk["first_divergent"]["jump"] == pytest.approx(fd["jump"], rel=1e-9)
    # diagnose names the same node and writes the same reproducer
    repro2 = tmp_path / "repro-diagnose"
    r = run([onnxparity, "diagnose", bundle, "--format", "json", "--no-sweep",
             "--save-repro", repro2], timeout=600)
    dg = json.loads(r.stdout)
    assert r.returncode == 1 and dg["first_divergent"]["node"] == fd["node"], r.stdout[-2000:]
    assert dg["repro"] == str(repro2) and (repro2 / "model.onnx").exists()
    b = run([tools / "barerepro", lib, repro2])
    assert b.returncode == 0 and float(b.stdout.split()[1]) == pytest.approx(got, rel=1e-6)


# --- vacuous comparisons, gate --------------------------------------------------------


class Tiny(torch.nn.Module):
    """A classifier whose logits are ~1e-13: below any float32 atol."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
        return self.fc(x) * 1e-13


class Constant(torch.nn.Module):
    """Ignores its input: every row of the batch is the same."""

    def __init__(self):
        super().__init__()
        self.b = torch.nn.Parameter(torch.arange(5.0))

    def forward(self, x):
        return self.b.expand(x.shape[0], 5) + 0 * x.sum()


def test_vacuous_comparisons_are_reported(onnxparity, tmp_path):
    g = torch.Generator().manual_seed(3)
    fx = [torch.randn(2, 16, generator=g), torch.randn(4, 16, generator=g)]
    onnxparity_capture(Tiny().eval(), fx, tmp_path / "tiny")
    r = run([onnxparity, "check", tmp_path / "tiny", "--format", "json"])
    doc = json.loads(r.stdout)
    assert doc["summary"]["outputs_vacuous"] == 2
    for f in doc["fixtures"]:
        j = f["outputs"][0]["judgment"]
        assert j["vacuous"] == "below-atol"
        assert j["tolerance_applied"]["atol"] < 1e-15  # judged at rtol x scale, not at 1e-5
    r = run([onnxparity, "check", tmp_path / "tiny"])
    assert "vacuous: every |expected| is below atol" in r.stdout
    # and a real difference at that scale is now caught: break the logits by
    # 10%, in both eager runs (float32 alone moved would leave the float64
    # run agreeing with ORT: an ill-conditioned value, judged on that noise)
    for name, dt in (("output_0.pb", np.float32), ("reference64/output_0.pb", np.float64)):
        pb = tmp_path / "tiny" / "test_data_set_1" / name
        t = onnx.load_tensor(str(pb))
        arr = numpy_helper.to_array(t) * 1.1
        pb.write_bytes(numpy_helper.from_array(arr.astype(dt), t.name).SerializeToString())
    r = run([onnxparity, "check", tmp_path / "tiny", "--format", "json", "--no-bisect"])
    assert r.returncode == 1 and json.loads(r.stdout)["verdict"] == "fail"

    onnxparity_capture(Constant().eval(), fx, tmp_path / "const")
    r = run([onnxparity, "check", tmp_path / "const", "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 0
    assert [f["outputs"][0]["judgment"]["vacuous"] for f in doc["fixtures"]] == \
        ["constant-across-batch"] * 2
    r = run([onnxparity, "check", tmp_path / "const"])
    assert "vacuous: every row of the batch is identical" in r.stdout


def test_gate_record_refuses_a_failing_bundle(onnxparity, tmp_path):
    bundle, _, _ = PLANTED["resnet18-wrong-weight"](tmp_path / "b")
    crit = tmp_path / "c.json"
    r = run([onnxparity, "gate", bundle, "--criteria", crit, "--record"])
    assert r.returncode == 1 and not crit.exists()
    assert "not recording criteria" in r.stderr and "--allow-failing" in r.stderr
    r = run([onnxparity, "gate", bundle, "--criteria", crit, "--record", "--allow-failing"])
    assert r.returncode == 0 and crit.exists()


def test_gate_keeps_the_envelope(onnxparity, tmp_path):
    """Criteria recorded on a healthy bundle carry the noise envelope; a
    harmless retrain (every weight x 1.01, re-exported and re-captured) still
    passes, and a defect beyond the noise fails with a `noise` regression."""
    fx = images([1, 2], 64, seed=5)
    onnxparity_capture(build("resnet18"), fx, tmp_path / "a")
    crit = tmp_path / "c.json"
    r = run([onnxparity, "gate", tmp_path / "a", "--criteria", crit, "--record"])
    assert r.returncode == 0, r.stderr
    c = json.loads(crit.read_text())
    out = next(iter(c["outputs"].values()))
    assert out["envelope_max"] > 0 and out["noise_source"] == "float64"
    assert out["max_abs"] >= out["envelope_max"] and out["needed_atol"] >= out["envelope_max"]
    retrained = build("resnet18")
    with torch.no_grad():
        for p in retrained.parameters():
            p.mul_(1.01)
    onnxparity_capture(retrained, fx, tmp_path / "b")
    # strict on the environment too: a retrain changes the model's hash (a
    # note), nothing the numbers depend on
    r = run([onnxparity, "gate", tmp_path / "b", "--criteria", crit, "--format", "json",
             "--env-drift", "fail"])
    assert r.returncode == 0, r.stdout
    doc = json.loads(r.stdout)
    assert [(d["field"], d["effect"]) for d in doc["environment_drift"]] == [("model_sha256", "note")]
    # and the baseline diff of the two check documents sees no change either
    for name in ("a", "b"):
        p = run([onnxparity, "check", tmp_path / name, "--format", "json", "--no-bisect"])
        (tmp_path / f"{name}.json").write_text(p.stdout)
    r = run([onnxparity, "diff", tmp_path / "a.json", tmp_path / "b.json"])
    assert r.returncode == 0 and "verdict: unchanged" in r.stdout, r.stdout
    broken, _, _ = PLANTED["resnet18-wrong-weight"](tmp_path / "w")
    r = run([onnxparity, "gate", broken, "--criteria", crit, "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and "noise" in {g["check"] for g in doc["regressions"]}
    p = run([onnxparity, "check", broken, "--format", "json", "--no-bisect"])
    (tmp_path / "w.json").write_text(p.stdout)
    r = run([onnxparity, "diff", tmp_path / "a.json", tmp_path / "w.json"])
    assert r.returncode == 1 and "verdict: REGRESSED" in r.stdout, r.stdout


class Literal(torch.nn.Module):
    """A reshape written with a literal batch: a real risk, but every fixture
    here has that batch, so it explains nothing observed."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(12, 3)

    def forward(self, x):
        return self.fc(x.view(2, 12))


def test_latent_warning_is_listed_apart(onnxparity, tmp_path):
    g = torch.Generator().manual_seed(4)
    fx = [torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, generator=g)]
    onnxparity_capture(Literal().eval(), fx, tmp_path / "b", dynamic_axes=None)
    r = run([onnxparity, "check", tmp_path / "b", "--format", "json"])
    doc = json.loads(r.stdout)
    lint_warnings = [f for f in doc["lint"]["findings"] if f["severity"] == "warning"]
    assert r.returncode == 0 and doc["verdict"] == "pass"
    assert any(f["id"] == "ONP202" for f in lint_warnings)  # the literal reshape is seen
    assert doc["causes"] == []  # a latent risk is never a cause
    assert len(doc["latent"]) == len(lint_warnings)
    r = run([onnxparity, "check", tmp_path / "b"])
    assert "explain no failure" in r.stdout and "ONP202" in r.stdout
