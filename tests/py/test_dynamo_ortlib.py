"""The ORT the user deploys: `--ort-lib` pointed at the library inside the
onnxruntime Python package (python -m onnxparity.ortlib), checked on a
dynamo export.  Runs under the torch 2.x environment, which has that package;
skips elsewhere and says why.
"""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import onnxparity  # noqa: E402
from onnxparity import ortlib  # noqa: E402

from conftest import run  # noqa: E402


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module")
def lib():
    try:
        return ortlib.find()
    except LookupError as e:
        pytest.skip(str(e))


def test_module_prints_the_library(lib):
    p = subprocess.run([sys.executable, "-m", "onnxparity.ortlib"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert p.returncode == 0 and p.stdout.strip() == str(lib[0]), p.stderr
    assert lib[0].name.startswith("libonnxruntime.so")


def test_check_runs_on_the_packages_ort(lib, binary, tmp_path):
    path, version = lib
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).eval()
    g = torch.Generator().manual_seed(1)
    onnxparity.capture(model, [torch.randn(b, 8, generator=g) for b in (1, 4)], tmp_path / "b",
                       trace_fixture="auto")  # batch 4: torch.export specializes a dim of size 1
    r = run([binary, "check", tmp_path / "b", "--format", "json", "--ort-lib", path])
    assert r.returncode == 0, r.stderr
    env = json.loads(r.stdout)["environment"]
    assert env["ort_version"] == version and env["ort_library"] == str(path)
    # the same through the environment variable the tool reads
    r = run([binary, "check", tmp_path / "b", "--format", "json"],
            env=dict(os.environ, ONNXPARITY_ORT_LIB=str(path)))
    assert r.returncode == 0 and json.loads(r.stdout)["environment"]["ort_version"] == version
