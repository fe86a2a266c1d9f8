"""`onnxparity bisect`: the first node where ONNX Runtime leaves the eager
intermediates of a bundle made by the capture package.

A 10-block network (Conv -> BatchNorm -> ReLU each) is captured three ways:
block 6 left in training mode (allow_training=True, Must-show 3 of issue 5),
healthy (all eval), and healthy without intermediates.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_bisect.py
"""
import json
import sys

import pytest

from conftest import run

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from conftest import ROOT  # noqa: E402  (conftest also puts python/ on sys.path)

import onnxparity  # noqa: E402  (the package; the binary is the `binary` fixture)

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning",
                                        "ignore::UserWarning")

TRAINING_BLOCK = 6


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(c)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class Net(torch.nn.Module):
    def __init__(self, blocks=10, c=8):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(c) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(x)


def make_net():
    torch.manual_seed(0)
    m = Net()
    with torch.no_grad():  # running statistics far from a batch's own
        for b in m.blocks:
            b.bn.running_mean.uniform_(-0.5, 0.5)
            b.bn.running_var.uniform_(0.5, 2.0)
    return m.eval()


def fixtures():
    g = torch.Generator().manual_seed(1)
    return [torch.randn(2, 8, 16, 16, generator=g), torch.randn(3, 8, 16, 16, generator=g)]


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    d = tmp_path_factory.mktemp("bisect")
    bad = make_net()
    bad.blocks[TRAINING_BLOCK].train()
    onnxparity.capture(bad, fixtures(), d / "training", allow_training=True)
    onnxparity.capture(make_net(), fixtures(), d / "healthy")
    onnxparity.capture(make_net(), fixtures(), d / "noint", intermediates=False)
    return d


def bisect(binary, bundle, *args):
    r = run([binary, "bisect", bundle, *args])
    doc = json.loads(r.stdout) if "--format" in args and r.stdout.strip() else None
    return r, doc


def test_training_block_bn_is_first_divergent(binary, bundles):
    r, doc = bisect(binary, bundles / "training", "--format", "json")
    assert r.returncode == 1, r.stderr
    assert doc["verdict"] == "diverges"
    fd = doc["first_divergent"]
    assert fd["module"] == f"blocks.{TRAINING_BLOCK}.bn"
    assert fd["op_type"] == "BatchNormalization"
    assert fd["node"] == f"/blocks/blocks.{TRAINING_BLOCK}/bn/BatchNormalization"
    assert fd["max_abs"] > 0.1
    # its inputs agree: the conv output is compared and passes, the rest are weights
    assert fd["inputs_agree"] is True
    srcs = {i["name"]: i for i in fd["inputs"]}
    conv = f"/blocks/blocks.{TRAINING_BLOCK}/conv/Conv_output_0"
    assert srcs[conv]["source"] == "eager" and srcs[conv]["pass"] is True
    assert all(i["pass"] is True for i in fd["inputs"])
    # the curve: everything before agrees, the divergence is inherited after
    curve = doc["curve"]
    k = fd["index"]
    assert curve[k]["value"] == fd["output"]
    assert all(c["pass"] for c in curve[:k])
    assert all(not c["pass"] for c in curve[k:])
    assert len(curve) == 30  # conv, bn, relu per block, all mapped


def test_text_leads_with_first_divergent(binary, bundles):
    r, _ = bisect(binary, bundles / "training")
    assert r.returncode == 1, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("first divergent: node /blocks/blocks.6/bn/BatchNormalization")
    assert "module blocks.6.bn" in first
    assert "the node alone fails: the divergence starts here" in first


def test_healthy_agrees(binary, bundles):
    r, doc = bisect(binary, bundles / "healthy", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["verdict"] == "agrees" and doc["first_divergent"] is None
    assert doc["summary"]["values_compared"] > 0
    assert doc["summary"]["values_failed"] == 0
    r, _ = bisect(binary, bundles / "healthy")
    assert r.returncode == 0 and r.stdout.startswith("agrees:")


def test_json_schema(binary, bundles):
    _, doc = bisect(binary, bundles / "training", "--format", "json", "--opt-level", "disable")
    assert doc["schema"] == "onnxparity.bisect/1"
    for key in ("verdict", "model", "fixture", "environment", "first_divergent", "curve"):
        assert key in doc
    env = doc["environment"]
    for key in ("onnxparity", "ort_version", "provider", "opt_level", "model_sha256"):
        assert key in env
    assert env["opt_level"] == "disable" and len(env["model_sha256"]) == 64
    for key in ("node", "op_type", "output", "module", "max_abs", "max_rel", "inputs"):
        assert key in doc["first_divergent"]
    for i in doc["first_divergent"]["inputs"]:
        assert {"name", "max_abs", "pass"} <= set(i)
    for c in doc["curve"]:
        assert {"value", "node", "op_type", "module", "max_abs", "max_rel", "pass"} <= set(c)


def test_tolerance_flags(binary, bundles):
    # a tolerance wide enough for batch statistics: everything agrees
    r, doc = bisect(binary, bundles / "training", "--format", "json", "--atol", "1e6")
    assert r.returncode == 0 and doc["verdict"] == "agrees"


def test_no_intermediates_eager_reference_is_exit_2(binary, bundles):
    r, _ = bisect(binary, bundles / "noint", "--reference", "eager")
    assert r.returncode == 2
    assert "no eager reference" in r.stderr and "--reference disable" in r.stderr
    r, doc = bisect(binary, bundles / "noint", "--reference", "eager", "--format", "json")
    assert r.returncode == 2 and doc["verdict"] == "error"
    assert "no eager reference" in doc["error"]


def test_no_intermediates_defaults_to_disable_reference(binary, bundles):
    """Without eager intermediates the reference is ORT at ORT_DISABLE_ALL:
    a healthy model has no node where `all` leaves `disable`."""
    r, doc = bisect(binary, bundles / "noint", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["reference"] == "disable" and doc["verdict"] == "agrees"
    assert doc["summary"]["values_compared"] == doc["summary"]["values_exposed"] > 0
    assert doc["instrumented_reproduces"] is True
    r, _ = bisect(binary, bundles / "noint")
    assert r.stdout.startswith("agrees:") and "ORT at opt-level disable" in r.stdout.splitlines()[0]


def test_fixture_selects(binary, bundles):
    r, doc = bisect(binary, bundles / "training", "--format", "json", "--fixture", "1")
    assert r.returncode == 1
    assert doc["fixture"] == 1 and doc["fixtures"] == [1]
    assert doc["first_divergent"]["fixture"] == 1
    r, doc = bisect(binary, bundles / "training", "--format", "json")
    assert doc["fixture"] is None and doc["fixtures"] == [0, 1]
    r, _ = bisect(binary, bundles / "training", "--fixture", "7")
    assert r.returncode == 2 and "test_data_set_7" in r.stderr


def test_external_data_leaves_nothing(binary, tmp_path):
    onnxparity.capture(make_net(), fixtures()[:1], tmp_path / "ext", large_model=True)
    before = sorted(p.name for p in (tmp_path / "ext").iterdir())
    assert "model.onnx.data" in before
    r, doc = bisect(binary, tmp_path / "ext", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert doc["environment"]["external_data"] is True
    assert sorted(p.name for p in (tmp_path / "ext").iterdir()) == before


def test_usage(binary, tmp_path):
    assert run([binary, "bisect"]).returncode == 2
    assert run([binary, "bisect", tmp_path, "--bogus"]).returncode == 2
    for bad in (["--reference", "ort"], ["--chunk", "0"], ["--chunk", "x"],
                ["--max-exposed-bytes", "12Q"], ["--max-exposed-bytes", "0"],
                ["--max-exposed-bytes", "12 "]):
        r = run([binary, "bisect", tmp_path, *bad])
        assert r.returncode == 2 and bad[0] in r.stderr, (bad, r.stderr)
    r = run([binary, "bisect", tmp_path])  # no fixtures
    assert r.returncode == 2 and "test_data_set" in r.stderr


def test_legacy_opset_upgraded(binary, testdata, tmp_path):
    """An opset-6 model (Debian's ONNX test data) with a hand-made index.json
    naming its output: upgraded to opset 7 in memory, then compared."""
    import shutil
    src = testdata / "pytorch-converted" / "test_Linear"
    if not src.is_dir():
        pytest.skip(f"{src} is missing")
    b = tmp_path / "legacy"
    (b / "test_data_set_0" / "intermediates").mkdir(parents=True)
    shutil.copy(src / "model.onnx", b / "model.onnx")
    for f in ("input_0.pb", "output_0.pb"):
        shutil.copy(src / "test_data_set_0" / f, b / "test_data_set_0" / f)
    shutil.copy(src / "test_data_set_0" / "output_0.pb",
                b / "test_data_set_0" / "intermediates" / "o.pb")
    import onnx
    value = onnx.load(str(b / "model.onnx")).graph.output[0].name
    (b / "test_data_set_0" / "intermediates" / "index.json").write_text(json.dumps(
        {"schema": "onnxparity.intermediates/1", "fixture": 0,
         "entries": [{"file": "o.pb", "value": value, "module": "lin", "call": 0}]}))
    r, doc = bisect(binary, b, "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["environment"]["upgraded_to_opset7"] is True
    assert doc["summary"]["values_compared"] == 1
    # a file name that leaves the intermediates folder is refused
    (b / "test_data_set_0" / "intermediates" / "index.json").write_text(json.dumps(
        {"entries": [{"file": "../output_0.pb", "value": value, "module": "lin"}]}))
    r, _ = bisect(binary, b)
    assert r.returncode == 2 and "leaves the intermediates folder" in r.stderr


# --- local vs inherited -----------------------------------------------------------


class Scale(torch.nn.Module):
    """x * 2**20: exact in float32, so the node alone on eager inputs gives
    eager's output bit for bit, while it magnifies its input's rounding
    differences past a tight rtol."""

    def forward(self, x):
        return x * 1048576.0


class ScaleNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.scale = Scale()
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.conv2(self.scale(self.conv(x)))


def test_training_bn_error_is_local(binary, bundles):
    r, doc = bisect(binary, bundles / "training", "--format", "json")
    assert r.returncode == 1, r.stderr
    loc = doc["first_divergent"]["local"]
    assert loc["verdict"] == "local", loc
    assert loc["max_abs"] > 0.1 and loc["mismatches"] > 0
    assert loc["nodes"] == 1 and loc["inputs_fed"] == 1  # the BN alone, fed the eager conv output
    assert loc["input_max_abs"] < 1e-5
    assert loc["fixture"] == doc["first_divergent"]["fixture"]
    r, _ = bisect(binary, bundles / "training")
    line = next(x for x in r.stdout.splitlines() if x.startswith("local:"))
    assert "LOCAL" in line and "owns it" in line


def test_downstream_amplifier_is_inherited(binary, tmp_path):
    """conv -> x*2**20 -> conv2 at rtol 1e-6: the conv's rounding
    differences pass (atol), the exact scaling magnifies them past the
    tolerance.  That is float noise, amplified: the noise rule sees the Mul's
    own float64 deviation grow by the same 2**20 and bisect agrees.  With the
    tolerance made binding (--strict-tol) the Mul is the first divergent
    node; run alone on the eager conv output it reproduces eager exactly:
    inherited."""
    torch.manual_seed(0)
    onnxparity.capture(ScaleNet().eval(), fixtures(), tmp_path / "b")
    r, doc = bisect(binary, tmp_path / "b", "--format", "json", "--rtol", "1e-6")
    assert r.returncode == 0 and doc["verdict"] == "agrees", r.stdout + r.stderr
    mul = next(p for p in doc["curve"] if p["module"] == "scale")
    assert mul["verdict"] == "within-noise" and mul["noise_source"] == "float64"
    r, doc = bisect(binary, tmp_path / "b", "--format", "json", "--rtol", "1e-6", "--strict-tol")
    assert r.returncode == 1, r.stdout + r.stderr
    fd = doc["first_divergent"]
    assert fd["module"] == "scale" and fd["op_type"] == "Mul", fd
    assert fd["inputs_agree"] is True
    loc = fd["local"]
    assert loc["verdict"] == "inherited", loc
    assert loc["max_abs"] == 0 and loc["mismatches"] == 0
    assert 0 < loc["input_max_abs"] < 1e-5
    r, _ = bisect(binary, tmp_path / "b", "--rtol", "1e-6", "--strict-tol")
    assert "amplifies the small differences" in r.stdout.splitlines()[0]
    assert "INHERITED" in next(x for x in r.stdout.splitlines() if x.startswith("local:"))


# --- does the instrumented model reproduce the mismatch? --------------------------


def resnetish():
    sys.path.insert(0, str(ROOT / "tests" / "py"))
    import test_diagnose as td
    torch.manual_seed(0)
    return td.trained_stats(td.ResNetish()), td.images(2, 3, seed=3)


def ort_disable_outputs(binary, bundle):
    """Replace each fixture's expected outputs with ORT's at ORT_DISABLE_ALL."""
    for d in sorted(bundle.glob("test_data_set_*")):
        r = run([binary, "run", bundle / "model.onnx", "--input", f"x={d / 'input_0.pb'}",
                 "--opt-level", "disable", "--save", d / "ort"])
        assert r.returncode == 0, r.stderr
        r = run([binary, "convert", d / "ort" / "output.npy", d / "output_0.pb"])
        assert r.returncode == 0, r.stderr
        import shutil
        shutil.rmtree(d / "ort")


def test_instrumented_reproduces_training(binary, bundles):
    _, doc = bisect(binary, bundles / "training", "--format", "json")
    assert doc["instrumented_reproduces"] is True
    rp = doc["reproduce"]
    assert rp["plain"]["pass"] is False and rp["instrumented"]["pass"] is False
    assert rp["plain"]["max_abs"] > 0.01 and rp["against"] == "eager"
    assert doc["fallback"] is None


@pytest.fixture(scope="module")
def bitwise(tmp_path_factory, binary):
    """A healthy ResNet-ish CNN whose expected outputs are ORT's own at
    disable, with and without eager intermediates: compared bitwise, only
    ORT's optimizations can differ."""
    d = tmp_path_factory.mktemp("bitwise")
    m, xs = resnetish()
    onnxparity.capture(m, xs, d / "eager")
    onnxparity.capture(m, xs, d / "noint", intermediates=False)
    for b in ("eager", "noint"):
        ort_disable_outputs(binary, d / b)
    return d


NO_NCHWC = ("--session-config", "optimization.disable_specified_optimizers=NchwcTransformer")


def test_instrumented_does_not_reproduce_a_blocked_fusion(binary, bitwise):
    """With NchwcTransformer off, what still changes bits at `all` is a
    Conv fusion; exposing every intermediate blocks it, so the instrumented
    model agrees bitwise with disable where the plain model does not: bisect
    must say so (text and JSON), and name the fallback it took: one value
    exposed per session (binary search), which lets the fusion happen and
    lands on the fused Add."""
    args = ("--rtol", "0", "--atol", "0", *NO_NCHWC)
    r, doc = bisect(binary, bitwise / "noint", "--format", "json", *args)
    rp = doc["reproduce"]
    if rp["plain"]["pass"]:
        pytest.skip("ORT_ENABLE_ALL without NchwcTransformer is bitwise disable on this CPU")
    assert doc["reference"] == "disable"
    assert doc["instrumented_reproduces"] is False, rp
    assert rp["instrumented"]["pass"] is True and rp["plain"]["max_abs"] > 0
    assert "a fusion they block" in rp["note"]
    fb = doc["fallback"]
    assert fb["mode"] == "single", fb
    assert doc["verdict"] == "diverges" and r.returncode == 1
    assert doc["chunks"]["size"] == 1 and doc["chunks"]["sessions"] <= 5  # log2(9) + 1
    assert doc["first_divergent"]["node"] == "/block/Add", doc["first_divergent"]
    r, _ = bisect(binary, bitwise / "noint", *args)
    assert "does NOT reproduce" in r.stdout and "fallback: single" in r.stdout
    # with eager intermediates the single-exposure search lands on the first conv
    # (torch and ORT differ there bitwise anyway)
    r, doc = bisect(binary, bitwise / "eager", "--format", "json", *args)
    assert doc["instrumented_reproduces"] is False
    assert doc["fallback"]["mode"] == "single"
    assert doc["first_divergent"]["op_type"] == "Conv"


# --- the disable reference ---------------------------------------------------------


def test_disable_reference_names_where_all_leaves_disable(binary, bitwise):
    """Bitwise, `all` (NchwcTransformer on) changes the first Conv's bits;
    against ORT at disable the bisect names that Conv, and rerun alone at
    `all` on disable's inputs it still differs: local."""
    r, doc = bisect(binary, bitwise / "noint", "--format", "json", "--rtol", "0", "--atol", "0")
    if doc["verdict"] == "agrees" and doc["instrumented_reproduces"]:
        pytest.skip("ORT_ENABLE_ALL is bitwise ORT_DISABLE_ALL on this CPU")
    assert r.returncode == 1 and doc["reference"] == "disable"
    fd = doc["first_divergent"]
    assert fd["op_type"] == "Conv" and fd["node"] == "/stem/stem.0/Conv", fd
    assert fd["inputs_agree"] is True
    assert fd["local"]["verdict"] == "local"
    # --reference disable on a bundle with intermediates: the same answer
    _, doc2 = bisect(binary, bitwise / "eager", "--format", "json", "--rtol", "0", "--atol", "0",
                     "--reference", "disable")
    assert doc2["reference"] == "disable" and doc2["first_divergent"]["node"] == fd["node"]
    # at the default tolerance the model is healthy: nothing diverges
    r, doc = bisect(binary, bitwise / "noint", "--format", "json")
    assert r.returncode == 0 and doc["verdict"] == "agrees" and doc["reference"] == "disable"


@pytest.mark.parametrize("name", ["pytorch-operator/test_operator_basic",
                                  "pytorch-converted/test_GLU",
                                  "pytorch-converted/test_PixelShuffle"])
def test_disable_reference_on_onnx_testdata(binary, testdata, name):
    src = testdata / name
    if not src.is_dir():
        pytest.skip(f"{src} is missing")
    import onnx
    n_values = sum(len([o for o in nd.output if o]) for nd in onnx.load(str(src / "model.onnx")).graph.node)
    r, doc = bisect(binary, src, "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["reference"] == "disable" and doc["verdict"] == "agrees"
    assert doc["summary"]["values_compared"] == n_values
    assert doc["instrumented_reproduces"] is True  # output_0.pb vs disable's outputs


# --- chunks ------------------------------------------------------------------------


def curve_key(doc):
    return [(c["value"], c["max_abs"], c["max_rel"], c["pass"]) for c in doc["curve"]]


@pytest.fixture(scope="module")
def resnets(tmp_path_factory):
    d = tmp_path_factory.mktemp("resnets")
    m, xs = resnetish()
    onnxparity.capture(m, xs, d / "resnetish")
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    r18 = tv.models.resnet18(num_classes=10).eval()
    g = torch.Generator().manual_seed(2)
    onnxparity.capture(r18, [torch.randn(1, 3, 64, 64, generator=g)], d / "resnet18")
    return d


@pytest.mark.parametrize("bundle", ["resnetish", "resnet18", "training"])
def test_chunked_equals_unchunked(binary, bundles, resnets, bundle):
    """At ORT_DISABLE_ALL (nothing fused, so the exposed set cannot change
    a kernel) every chunking gives the unchunked document's curve and first
    divergent node exactly; several sessions are really used."""
    b = bundles / bundle if bundle == "training" else resnets / bundle
    base = ("--format", "json", "--opt-level", "disable")
    _, whole = bisect(binary, b, *base)
    assert whole["chunks"]["sessions"] == 1
    n = len(whole["curve"])
    sizes = ("9", "25") if bundle == "resnet18" else ("1", "3", "7")  # resnet18: many values
    budget = "1M" if bundle == "resnet18" else "16K"  # less than a few values of the model
    for extra in [["--chunk", k] for k in sizes] + [["--max-exposed-bytes", budget]]:
        r, doc = bisect(binary, b, *base, *extra)
        assert r.returncode == (1 if bundle == "training" else 0), r.stderr
        if extra[0] == "--chunk":
            k = int(extra[1])
            assert doc["chunks"]["size"] == min(k, n)
            assert doc["chunks"]["sessions"] == (n + k - 1) // k, (extra, doc["chunks"])
        else:
            assert doc["chunks"]["sessions"] > 1, (extra, doc["chunks"])
        assert curve_key(doc) == curve_key(whole), extra
        fd, wfd = doc["first_divergent"], whole["first_divergent"]
        assert (fd and {k: v for k, v in fd.items() if k != "local"}) == \
               (wfd and {k: v for k, v in wfd.items() if k != "local"}), extra
        assert doc["instrumented_reproduces"] == whole["instrumented_reproduces"]


def test_chunked_at_all_same_verdicts(binary, bundles):
    """At `all` a chunk session may fuse values that another session exposes,
    so errors may move by rounding; which values pass and the first divergent
    node must not."""
    _, whole = bisect(binary, bundles / "training", "--format", "json")
    for k in ("1", "4"):
        _, doc = bisect(binary, bundles / "training", "--format", "json", "--chunk", k)
        assert [c["pass"] for c in doc["curve"]] == [c["pass"] for c in whole["curve"]]
        assert doc["first_divergent"]["node"] == whole["first_divergent"]["node"]
        assert doc["first_divergent"]["local"]["verdict"] == "local"
        for a, b in zip(doc["curve"], whole["curve"]):
            assert abs(a["max_abs"] - b["max_abs"]) <= 1e-6 + 1e-5 * abs(b["max_abs"])


def test_chunks_planned_from_declared_shapes(binary, bundles, tmp_path):
    """With value_info (ONNX shape inference), the automatic chunks are
    packed from the declared shapes, the symbolic batch dim sized by the
    largest fixture (3): 8x16x16 float32 x 3 = 24576 bytes a value, four
    values in a 100000-byte budget."""
    import shutil
    import onnx
    b = tmp_path / "shaped"
    shutil.copytree(bundles / "training", b)
    m = onnx.shape_inference.infer_shapes(onnx.load(str(b / "model.onnx")))
    assert len(m.graph.value_info) >= 29
    onnx.save(m, str(b / "model.onnx"))
    _, whole = bisect(binary, b, "--format", "json", "--opt-level", "disable")
    r, doc = bisect(binary, b, "--format", "json", "--opt-level", "disable",
                    "--max-exposed-bytes", "100000")
    assert r.returncode == 1, r.stderr
    ch = doc["chunks"]
    assert ch["size"] == 4 and ch["sessions"] == 8 and ch["estimated_bytes"] == 4 * 24576, ch
    assert curve_key(doc) == curve_key(whole)
    assert doc["first_divergent"]["node"] == whole["first_divergent"]["node"]


def test_external_data_local_and_disable_leave_nothing(binary, tmp_path):
    """External data: the local rerun and the disable reference open their
    extracted / instrumented models through hidden files beside model.onnx,
    and remove them."""
    bad = make_net()
    bad.blocks[TRAINING_BLOCK].train()
    onnxparity.capture(bad, fixtures()[:1], tmp_path / "ext", allow_training=True, large_model=True)
    before = sorted(p.name for p in (tmp_path / "ext").iterdir())
    r, doc = bisect(binary, tmp_path / "ext", "--format", "json")
    assert r.returncode == 1, r.stderr
    assert doc["environment"]["external_data"] is True
    assert doc["first_divergent"]["local"]["verdict"] == "local"
    r, doc = bisect(binary, tmp_path / "ext", "--format", "json", "--reference", "disable",
                    "--chunk", "7")
    assert r.returncode in (0, 1), r.stderr
    n = doc["summary"]["values_exposed"]  # every node output
    assert doc["reference"] == "disable" and doc["chunks"]["sessions"] == (n + 6) // 7
    assert sorted(p.name for p in (tmp_path / "ext").iterdir()) == before


class IntBatch(torch.nn.Module):
    """A batch size read with int(): the legacy trace bakes it into the
    Reshape, so a fixture of another batch reaches the Linear with the wrong
    width and ONNX Runtime refuses it."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.view(int(y.shape[0]), -1))


def test_fixtures_onnx_runtime_refuses_are_set_aside(binary, bundles, tmp_path):
    """The traced batch (4) runs, batch 2 is refused.  bisect bisects the
    fixture that runs (every value agrees with eager there), sets the
    refused one aside and says so: inconclusive (exit 1), not an error
    (exit 4) and not "agrees", naming check for the same target, which
    names the baked shape."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(3)
    b = tmp_path / "int batch"
    onnxparity.capture(IntBatch().eval(), [torch.randn(n, 3, 8, 8, generator=g) for n in (4, 2)], b,
                       exporter="legacy")
    r = run([binary, "bisect", b, "--format", "json"])
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "inconclusive" and doc["first_divergent"] is None
    assert doc["fixtures"] == [0] and doc["fixtures_refused"] == [1]
    assert "ORT_INVALID_ARGUMENT" in doc["refused_message"], doc["refused_message"]
    assert doc["summary"]["values_compared"] > 0 and doc["summary"]["values_failed"] == 0
    text = run([binary, "bisect", b])
    first = text.stdout.splitlines()[0]
    assert text.returncode == 1 and first.startswith("inconclusive: "), text.stdout
    assert "refused 1 fixture(s) (1)" in first and f"onnxparity check '{b}' names why" in first
    chk = run([binary, "check", b, "--format", "json"])
    assert chk.returncode == 1
    assert json.loads(chk.stdout)["causes"][0]["id"] == "baked-shape"
    # a bundle whose fixtures all run sets nothing aside
    healthy = run([binary, "bisect", bundles / "healthy", "--format", "json"])
    assert healthy.returncode == 0, healthy.stderr
    doc = json.loads(healthy.stdout)
    assert doc["fixtures_refused"] == [] and doc["refused_message"] is None
