"""capture's stdout is its summary line only (docs/capture.md: "one summary
line on stdout"): the dynamo exporter's progress lines ("[torch.onnx] Obtain
model graph ... ✅") go to stderr, where people still see them, and never
into the stdout that scripts read."""
import os
import pathlib
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("torch")

from conftest import expected_exporter  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent


def test_capture_stdout_is_the_summary_only(tmp_path):
    npz = tmp_path / "fx.npz"
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16), dtype=np.float32)
    np.savez(npz, **{"fixture_0/input_0": x})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(HERE)]),
               PYTHONWARNINGS="ignore")
    p = subprocess.run([sys.executable, "-m", "onnxparity", "capture", "test_capture_models:small_net",
                        "--fixtures", str(npz), "--out", str(tmp_path / "b")],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 1 and "1 fixture(s), exporter" in lines[0], p.stdout
    assert "[torch.onnx]" not in p.stdout
    if expected_exporter() == "dynamo":
        # the progress lines were moved, not lost
        assert "[torch.onnx]" in p.stderr, p.stderr[-2000:]
