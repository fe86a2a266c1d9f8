"""`python3 -m onnxparity capture PKG.MODULE:FACTORY --fixtures FILE.npz --out DIR`."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("torch")

import consumers  # noqa: E402
from conftest import expected_exporter  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def binary(onnxparity):
    return onnxparity


def cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(HERE)]),
               PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "onnxparity", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd or ROOT, timeout=300)


def check(binary, bundle):
    r = subprocess.run([binary, "check", str(bundle), "--format", "json", "--top-k", "auto"],
                       capture_output=True, text=True)
    if r.stdout.strip():
        consumers.validate_doc(json.loads(r.stdout), "check --format json")  # its published schema
    return r


def test_capture_per_fixture_members(tmp_path, binary):
    rng = np.random.default_rng(0)
    npz = tmp_path / "fx.npz"
    np.savez(npz, **{"fixture_0/input_0": rng.standard_normal((1, 3, 16, 16), dtype=np.float32),
                     "fixture_1/input_0": rng.standard_normal((4, 3, 16, 16), dtype=np.float32)})
    p = cli("capture", "test_capture_models:small_net", "--fixtures", npz, "--out", tmp_path / "b",
            "--opset", "13", "--trace-fixture", "auto")  # batch 4: torch.export specializes a size-1 dim
    assert p.returncode == 0, p.stderr
    m = json.loads((tmp_path / "b" / "parity.json").read_text())
    assert f"2 fixture(s), exporter {expected_exporter()} opset {m['opset']}" in p.stdout
    assert m["export_args"]["trace_fixture"] == "auto" and m["export_args"]["traced_fixture"] == 1
    assert m["export_args"]["opset_requested"] == 13
    if m["exporter"] == "legacy":
        assert m["opset"] == 13
    elif m["opset"] != 13:  # dynamo converts down only where it can: the capture says so
        assert any("not the opset 13 asked for" in w["message"] for w in m["warnings"]), m["warnings"]
    assert [f["inputs"][0]["shape"][0] for f in m["fixtures"]] == [1, 4]
    assert (tmp_path / "b" / "test_data_set_1" / "intermediates" / "index.json").is_file()
    r = check(binary, tmp_path / "b")
    assert r.returncode == 0 and json.loads(r.stdout)["verdict"] == "pass", r.stdout + r.stderr


def test_capture_split_and_no_intermediates(tmp_path, binary):
    npz = tmp_path / "fx.npz"
    np.savez(npz, input_0=np.random.default_rng(1).standard_normal((5, 3, 16, 16), dtype=np.float32))
    p = cli("capture", "test_capture_models:small_net", "--fixtures", npz, "--out", tmp_path / "b",
            "--split", "2,3", "--no-intermediates")
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "b" / "test_data_set_0" / "intermediates").exists()
    assert check(binary, tmp_path / "b").returncode == 0


def test_cli_refusals_exit_2_and_write_nothing(tmp_path):
    npz = tmp_path / "fx.npz"
    np.savez(npz, input_0=np.zeros((2, 3, 16, 16), np.float32))
    p = cli("capture", "test_capture_models:small_net_training", "--fixtures", npz, "--out", tmp_path / "b")
    assert p.returncode == 2 and "training mode" in p.stderr and "head.1 (Dropout)" in p.stderr
    p = cli("capture", "test_capture_models:no_such_factory", "--fixtures", npz, "--out", tmp_path / "b")
    assert p.returncode == 2 and "no attribute" in p.stderr
    p = cli("capture", "test_capture_models:small_net", "--fixtures", tmp_path / "none.npz",
            "--out", tmp_path / "b")
    assert p.returncode == 3
    p = cli("capture", "test_capture_models:small_net_training", "--fixtures", npz, "--out",
            tmp_path / "b", "--allow-training")
    assert p.returncode == 0, p.stderr
    p = cli("capture", "test_capture_models:small_net", "--out", tmp_path / "c")
    assert p.returncode == 2
    assert sorted(x.name for x in tmp_path.iterdir()) == ["b", "fx.npz"]
