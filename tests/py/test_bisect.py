"""`onnxparity bisect`: the first node where ONNX Runtime leaves the eager
intermediates of a bundle made by the capture package.

A 10-block network (Conv -> BatchNorm -> ReLU each) is captured three ways:
block 6 left in training mode (allow_training=True, Must-show 3 of issue 5),
healthy (all eval), and healthy without intermediates.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_bisect.py
"""
import json
import pathlib
import sys

import pytest

from conftest import run

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT / "python") not in sys.path:  # PYTHONPATH=python is the documented way
    sys.path.insert(0, str(ROOT / "python"))

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
    assert "module blocks.6.bn" in first and "its inputs agree" in first


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


def test_no_intermediates_is_exit_2(binary, bundles):
    r, _ = bisect(binary, bundles / "noint")
    assert r.returncode == 2
    assert "no eager reference" in r.stderr
    r, doc = bisect(binary, bundles / "noint", "--format", "json")
    assert r.returncode == 2 and doc["verdict"] == "error"
    assert "no eager reference" in doc["error"]


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
