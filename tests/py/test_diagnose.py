"""`onnxparity diagnose` and `onnxparity sweep` on real torch exports made
here with the capture package: each planted defect must come out as the
top cause (docs/diagnose.md), a healthy model must come out clean.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_diagnose.py
"""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")


from onnxparity import capture  # noqa: E402
from conftest import run  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning",
                                        "ignore::UserWarning")

CAUSE_IDS = {"training-mode", "baked-shape", "traced-control-flow", "op-semantics",
             "graph-optimization", "execution-provider", "nondeterminism", "reference",
             "state-mutation", "unknown"}


def images(*batches, size=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, 3, size, size, generator=g) for b in batches]


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(c)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class ResNetish(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1, bias=False),
                                        torch.nn.BatchNorm2d(8), torch.nn.ReLU())
        self.block = Block(8)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean((2, 3)))


def trained_stats(model):
    """Give BatchNorm non-trivial running statistics, then eval()."""
    torch.manual_seed(1)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(8, 3, 16, 16) * 2 + 0.5)
    return model.eval()


class BakedView(torch.nn.Module):
    """int(x.shape[0]) is a Python int at trace time: the Reshape keeps 4."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y.view(int(y.shape[0]), -1)


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if x.sum() > 0:  # resolved once, at trace time
            return y * 2
        return y - 1


class Noisy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y + 0.1 * torch.randn_like(y)


def diagnose(onnxparity, bundle, *extra):
    r = run([onnxparity, "diagnose", bundle, "--format", "json", *extra])
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    d = tmp_path_factory.mktemp("healthy") / "b"
    torch.manual_seed(0)
    capture(trained_stats(ResNetish()), images(2, 3, 2, seed=3), d)
    return d


def test_training_mode_names_the_batchnorm(onnxparity, tmp_path):
    torch.manual_seed(0)
    m = trained_stats(ResNetish())
    m.stem[1].train()  # one BatchNorm left in training mode
    # legacy: torch 2.9's dynamo exporter refuses BatchNorm in training mode (test_dynamo.py)
    capture(m, images(4, 4), tmp_path / "b", allow_training=True, exporter="legacy")
    rc, doc = diagnose(onnxparity, tmp_path / "b")
    assert rc == 1 and doc["verdict"] == "fail"
    top = doc["causes"][0]
    assert top["id"] == "training-mode" and top["confidence"] == "high"
    assert "BatchNormalization" in top["node"] and "stem" in top["node"]
    assert not doc["probes"]["batch_invariance"]["pass"]
    assert doc["first_divergent"] and doc["first_divergent"]["op_type"] == "BatchNormalization"


def test_baked_shape_from_probes(onnxparity, tmp_path):
    torch.manual_seed(0)
    # legacy: torch.export keeps int(y.shape[0]) symbolic, the defect is the tracer's
    capture(BakedView().eval(), images(4, 2, 4), tmp_path / "b", exporter="legacy")
    rc, doc = diagnose(onnxparity, tmp_path / "b")
    assert rc == 1
    top = doc["causes"][0]
    assert top["id"] == "baked-shape" and top["confidence"] == "high", doc["causes"]
    p = doc["probes"]
    assert p["shapes"]["shape_dependent"] and p["shapes"]["fail_fixture"] == 1
    assert p["batch_invariance"]["tested"] and p["batch_invariance"]["shape_error"]
    # text output leads with the same cause
    r = run([onnxparity, "diagnose", tmp_path / "b", "--no-sweep"])
    assert r.returncode == 1 and r.stdout.startswith("cause    baked-shape (high")


def test_traced_control_flow_from_fixture_dependence(onnxparity, tmp_path):
    torch.manual_seed(0)
    x = images(2, 2, 2, 2, seed=5)
    fixtures = [x[0].abs() + 0.1, -x[1].abs() - 0.1, x[2].abs() + 0.1, -x[3].abs() - 0.1]
    capture(Branchy().eval(), fixtures, tmp_path / "b", exporter="legacy")  # dynamo refuses the branch
    rc, doc = diagnose(onnxparity, tmp_path / "b")
    assert rc == 1
    top = doc["causes"][0]
    assert top["id"] == "traced-control-flow" and top["confidence"] in ("high", "medium")
    dep = doc["probes"]["fixture_dependence"]
    assert dep["dependent"] and dep["pass_fixture"] in (0, 2) and dep["fail_fixture"] in (1, 3)
    assert not doc["probes"]["shapes"]["shape_dependent"]
    # check, without the probes, names the same cause from its own fixture
    # verdicts (a pass and a fail of one shape beside the TracerWarning),
    # and no "unknown" beside it
    r = run([onnxparity, "check", tmp_path / "b", "--format", "json"])
    assert r.returncode == 1
    causes = json.loads(r.stdout)["causes"]
    assert causes[0]["id"] == "traced-control-flow" and causes[0]["confidence"] == "medium", causes
    assert "unknown" not in {c["id"] for c in causes}, causes
    assert any("have the same input shapes" in e for e in causes[0]["evidence"]), causes[0]
    # bisect: fixture 0 (positive) was traced, so the graph holds y * 2; on
    # the negative fixtures eager took y - 1: the graph output's own node,
    # the Mul of the root module (no intermediate of its own: its reference
    # is the fixture's output), is where ONNX leaves eager, its input agreeing
    b = run([onnxparity, "bisect", tmp_path / "b"])
    first = b.stdout.splitlines()[0]
    assert b.returncode == 1 and first.startswith("first divergent: node /Mul (Mul)"), b.stdout
    assert "its inputs are inside their tolerance or noise" in first, first


def test_healthy_model_is_clean(onnxparity, healthy):
    rc, doc = diagnose(onnxparity, healthy)
    assert rc == 0 and doc["verdict"] == "pass", doc["causes"]
    assert not [c for c in doc["causes"] if c["confidence"] in ("high", "medium")]
    p = doc["probes"]
    assert p["determinism"]["deterministic"] and p["batch_invariance"]["tested"]
    assert p["batch_invariance"]["pass"] and not p["fixture_dependence"]["dependent"]


def test_sweep_matrix_on_healthy_model(onnxparity, healthy):
    r = run([onnxparity, "sweep", healthy, "--format", "json"])
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "onnxparity.sweep/1" and doc["verdict"] == "pass"
    levels = doc["sweep"]["levels"]
    assert [lv["level"] for lv in levels] == ["disable", "basic", "extended", "layout", "all"]
    for lv in levels:
        assert lv["ran"] and lv["pass"] and lv["deterministic"]
        assert [o["name"] for o in lv["outputs"]] == ["output_0"] or len(lv["outputs"]) == 1
        assert all(o["pass"] and o["max_abs"] < 1e-4 for o in lv["outputs"])
    assert not doc["sweep"]["optimizer_search"]["searched"]
    assert "CPUExecutionProvider" in doc["sweep"]["providers"]
    txt = run([onnxparity, "sweep", healthy])
    assert txt.returncode == 0 and "disable" in txt.stdout and "verdict: pass" in txt.stdout


def test_sweep_names_the_optimizers(onnxparity, healthy, tmp_path):
    """Expected outputs replaced by ORT's own at ORT_DISABLE_ALL, compared
    bitwise: whatever level changes a bit must be pinned on optimizers whose
    disabling (';'-joined) restores parity at `all`."""
    import shutil
    b = tmp_path / "b"
    shutil.copytree(healthy, b)
    (b / "parity.json").unlink()
    for d in sorted(b.glob("test_data_set_*")):
        shutil.rmtree(d / "intermediates", ignore_errors=True)
        r = run([onnxparity, "run", b / "model.onnx", "--input", f"x={d / 'input_0.pb'}",
                 "--opt-level", "disable", "--save", d / "ort"])
        assert r.returncode == 0, r.stderr
        r = run([onnxparity, "convert", d / "ort" / "output.npy", d / "output_0.pb"])
        assert r.returncode == 0, r.stderr
        shutil.rmtree(d / "ort")
    r = run([onnxparity, "sweep", b, "--rtol", "0", "--atol", "0", "--format", "json"])
    doc = json.loads(r.stdout)
    levels = {lv["level"]: lv for lv in doc["sweep"]["levels"]}
    assert levels["disable"]["pass"]
    if levels["all"]["pass"]:
        pytest.skip("ORT_ENABLE_ALL is bitwise identical to ORT_DISABLE_ALL on this CPU")
    assert r.returncode == 1
    search = doc["sweep"]["optimizer_search"]
    assert search["searched"] and search["culprit"], search
    again = run([onnxparity, "sweep", b, "--rtol", "0", "--atol", "0", "--no-search",
                 "--format", "json", "--session-config",
                 "optimization.disable_specified_optimizers=" + search["culprit"]])
    fixed = {lv["level"]: lv for lv in json.loads(again.stdout)["sweep"]["levels"]}
    assert fixed["all"]["pass"]
    rc, diag = diagnose(onnxparity, b, "--rtol", "0", "--atol", "0")
    assert rc == 1 and diag["causes"][0]["id"] == "graph-optimization"
    assert search["culprit"] in diag["causes"][0]["fix"]


def test_nondeterminism_from_random_op(onnxparity, tmp_path):
    torch.manual_seed(0)
    capture(Noisy().eval(), images(2, 2), tmp_path / "b")
    rc, doc = diagnose(onnxparity, tmp_path / "b", "--no-sweep")
    assert rc == 1
    top = doc["causes"][0]
    assert top["id"] == "nondeterminism" and top["confidence"] == "high", doc["causes"]
    assert "RandomNormalLike" in (top["node"] or "") or any(
        "RandomNormalLike" in e for e in top["evidence"])
    assert not doc["probes"]["determinism"]["deterministic"]


def test_json_schema(onnxparity, healthy):
    rc, doc = diagnose(onnxparity, healthy)
    assert doc["schema"] == "onnxparity.diagnose/1"
    for k in ("verdict", "causes", "first_divergent", "sweep", "probes", "environment", "lint"):
        assert k in doc
    for k in ("numbers", "determinism", "batch_invariance", "shapes", "fixture_dependence"):
        assert k in doc["probes"]
    env = doc["environment"]
    for k in ("onnxparity", "ort_version", "provider", "opt_level", "model_sha256"):
        assert k in env
    assert doc["sweep"]["optimizer_search"].keys() >= {"searched", "culprit", "note"}


def test_causes_shape_and_ids(onnxparity, tmp_path):
    torch.manual_seed(0)
    capture(BakedView().eval(), images(4, 2), tmp_path / "b", exporter="legacy")
    _, doc = diagnose(onnxparity, tmp_path / "b", "--no-sweep")
    assert doc["causes"]
    for c in doc["causes"]:
        assert c.keys() >= {"id", "confidence", "node", "evidence", "fix"}
        assert c["id"] in CAUSE_IDS and c["confidence"] in ("high", "medium", "low")
        assert isinstance(c["evidence"], list) and c["evidence"] and c["fix"]


def test_usage_and_missing_fixtures(onnxparity, tmp_path):
    assert run([onnxparity, "diagnose"]).returncode == 2
    assert run([onnxparity, "sweep"]).returncode == 2
    (tmp_path / "empty").mkdir()
    assert run([onnxparity, "diagnose", tmp_path / "empty"]).returncode == 2
    assert run([onnxparity, "sweep", tmp_path / "empty"]).returncode == 2


# --- bisect's checks in the decision procedure (rule 8a) ---------------------------


def test_local_error_strengthens_the_cause_at_that_node(onnxparity, tmp_path):
    """The stem BatchNorm in training mode: bisect names it, and rerun alone
    on eager inputs it still fails, so the cause naming it says so (high)."""
    torch.manual_seed(0)
    m = trained_stats(ResNetish())
    m.stem[1].train()
    # legacy: torch 2.9's dynamo exporter refuses BatchNorm in training mode (test_dynamo.py)
    capture(m, images(4, 4), tmp_path / "b", allow_training=True, exporter="legacy")
    rc, doc = diagnose(onnxparity, tmp_path / "b", "--no-sweep")
    assert rc == 1
    fd = doc["first_divergent"]
    assert fd["local"] == "local" and fd["reference"] == "eager"
    assert doc["instrumented_reproduces"] is True
    top = doc["causes"][0]
    assert top["id"] == "training-mode" and top["confidence"] == "high"
    assert top["node"] == fd["node"]
    assert any("run alone on eager inputs still fails" in e and "local to it" in e
               for e in top["evidence"]), top["evidence"]
    r = run([onnxparity, "diagnose", tmp_path / "b", "--no-sweep"])
    assert "local: alone on reference inputs it still fails" in r.stdout


class AffineRelu(torch.nn.Module):
    """Three ONNX nodes (Mul, Add, Relu) and one eager value, the module's
    output: the Mul and the Add have no intermediate of their own."""

    def forward(self, x):
        return torch.relu(x * 2.0 + 1.0)


class Region(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.inner = AffineRelu()
        self.head = torch.nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.head(self.inner(self.conv(x)))


def test_a_local_region_is_not_called_the_node_alone(onnxparity, tmp_path):
    """The Add inside `inner` turned into a Sub (planted in model.onnx): the
    first value off eager is inner's output (the Relu), and the local rerun
    takes the two unmapped nodes before it along.  diagnose's text must say
    that region, not "alone"."""
    import onnx
    torch.manual_seed(0)
    b = tmp_path / "b"
    capture(Region().eval(), images(2, 2), b, exporter="legacy")
    m = onnx.load(str(b / "model.onnx"))
    [add] = [n for n in m.graph.node if n.op_type == "Add" and "inner" in n.name]
    add.op_type = "Sub"
    onnx.save(m, str(b / "model.onnx"))
    rc, doc = diagnose(onnxparity, b, "--no-sweep")
    assert rc == 1
    fd = doc["first_divergent"]
    assert fd["op_type"] == "Relu" and fd["module"].startswith("inner"), fd
    r = run([onnxparity, "diagnose", b, "--no-sweep"])
    lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip().startswith("local: ")]
    assert lines and lines[0].startswith("local: with the 2 node(s) before it that have no "
                                         "reference value"), r.stdout
    assert "alone" not in lines[0]


def ort_disable_bundle(onnxparity, healthy, dst):
    """The healthy bundle without intermediates, its expected outputs ORT's
    own at ORT_DISABLE_ALL."""
    import shutil
    shutil.copytree(healthy, dst)
    (dst / "parity.json").unlink()
    for d in sorted(dst.glob("test_data_set_*")):
        shutil.rmtree(d / "intermediates", ignore_errors=True)
        r = run([onnxparity, "run", dst / "model.onnx", "--input", f"x={d / 'input_0.pb'}",
                 "--opt-level", "disable", "--save", d / "ort"])
        assert r.returncode == 0, r.stderr
        r = run([onnxparity, "convert", d / "ort" / "output.npy", d / "output_0.pb"])
        assert r.returncode == 0, r.stderr
        shutil.rmtree(d / "ort")
    return dst


def test_disable_reference_names_the_node_without_intermediates(onnxparity, healthy, tmp_path):
    """No eager intermediates, bitwise: diagnose bisects against ORT at
    disable and the graph-optimization cause gets the node where `all`
    leaves `disable`."""
    b = ort_disable_bundle(onnxparity, healthy, tmp_path / "b")
    rc, doc = diagnose(onnxparity, b, "--rtol", "0", "--atol", "0", "--no-sweep")
    if rc == 0:
        pytest.skip("ORT_ENABLE_ALL is bitwise ORT_DISABLE_ALL on this CPU")
    fd = doc["first_divergent"]
    assert fd and fd["reference"] == "disable" and fd["op_type"] == "Conv", fd
    go = [c for c in doc["causes"] if c["id"] == "graph-optimization"]
    assert go and go[0]["node"] == fd["node"]
    assert any("bisect against ORT at opt-level disable" in e for e in go[0]["evidence"])


def test_blocked_fusion_is_reported(onnxparity, healthy, tmp_path):
    """With NchwcTransformer off, the bits `all` changes come from a fusion
    that exposing the intermediates blocks: diagnose reports that the
    instrumented model does not reproduce, as graph-optimization evidence."""
    b = ort_disable_bundle(onnxparity, healthy, tmp_path / "b")
    rc, doc = diagnose(onnxparity, b, "--rtol", "0", "--atol", "0", "--no-sweep",
                       "--session-config",
                       "optimization.disable_specified_optimizers=NchwcTransformer")
    if rc == 0:
        pytest.skip("ORT_ENABLE_ALL without NchwcTransformer is bitwise disable on this CPU")
    assert doc["instrumented_reproduces"] is False
    go = [c for c in doc["causes"] if c["id"] == "graph-optimization"]
    assert go and any("a fusion the exposure blocks" in e and "fallback: single" in e
                      for e in go[0]["evidence"]), doc["causes"]
    # one value per session lets the fusion happen: the fused Add is named
    name = doc["first_divergent"]["node"]
    if json.loads((healthy / "parity.json").read_text())["exporter"] == "legacy":
        assert name == "/block/Add"
    else:  # dynamo names nodes after torch.export's graph; the module is in the metadata
        import onnx
        node = next(n for n in onnx.load(str(b / "model.onnx")).graph.node if n.name == name)
        scopes = {p.key: p.value for p in node.metadata_props}["pkg.torch.onnx.name_scopes"]
        assert node.op_type == "Add" and scopes.startswith("['', 'block',"), (name, scopes)
